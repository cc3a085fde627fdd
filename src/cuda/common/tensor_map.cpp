#include "cuda/common/tensor_map.hpp"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <mutex>
#include <string>

namespace lowbit::cuda {

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
    (void)cudaGetLastError();
  });
  return fn;
}

}  // namespace

bool tensor_map_available() { return encode_fn() != nullptr; }

Status encode_tensor_map_2d(CUtensorMap* map, CUtensorMapDataType type, const void* base, uint64_t rows,
                            uint64_t cols, uint64_t row_bytes, uint32_t box_rows, uint32_t box_cols,
                            CUtensorMapSwizzle swizzle, const char* who, const char* what) {
  auto fn = encode_fn();
  if (fn == nullptr) return Status::Fail(std::string(who) + "the driver has no cuTensorMapEncodeTiled");
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = fn(map, type, 2, const_cast<void*>(base), dims, strides, box, elem_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return Status::Fail(std::string(who) + "cuTensorMapEncodeTiled failed for " + what + " (CUresult " +
                        std::to_string(static_cast<int>(r)) + ")");
  return Status::Ok();
}

}  // namespace lowbit::cuda
