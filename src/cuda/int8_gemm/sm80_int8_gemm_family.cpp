// Host side of the sm80 int8 GEMM family: what it accepts, its plan, packing, workspace and
// the launches of one run() (docs/kernels/int8_gemm.md, "sm80_int8_gemm"). The kernels, the
// tile table, the heuristic and the split-K reduction are the sm89 fp8 GEMM's, instantiated
// over int8 (sm80_int8_gemm_kernels.cu).
#include "cuda/int8_gemm/sm80_int8_gemm_family.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "cuda/common/check.hpp"
#include "cuda/fp8_gemm/sm89_fp8_gemm_params.hpp"
#include "cuda/int8_gemm/int8_gemm_common.hpp"

namespace lowbit::cuda {

namespace {

constexpr const char* kWho = "lowbit: sm80_int8_gemm: ";

bool aligned(const void* p, uintptr_t bytes) { return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0; }

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

bool cluster_split_runs_on(const GpuSpec& gpu) { return gpu.cc >= 90 && build_has_code_for(gpu.cc, 90); }

// m as the occupancy queries take it (the shared memory of a launch stops growing at one
// token tile, so any m past 2^20 behaves like 2^20).
int occupancy_m(const GemmDesc& d) { return static_cast<int>(d.m < (1 << 20) ? d.m : (1 << 20)); }

class Sm80Int8GemmImpl final : public detail::GemmImpl {
 public:
  Sm80Int8GemmImpl(const GemmDesc& desc, const GpuSpec& gpu, const Sm80Int8Plan& plan)
      : desc_(desc), device_(gpu.device), plan_(plan), pdl_(sm80_int8_gemm_uses_pdl(gpu)) {
    const Sm89Fp8TileConfig& c = kSm89Fp8Configs[plan_.config];
    m_tiles_ = (desc_.m + c.block_m - 1) / c.block_m;
    n_tiles_ = (desc_.n + c.block_n - 1) / c.block_n;
    if (plan_.split_mode == Sm89Fp8SplitMode::kWorkspace)
      partial_bytes_ = round_up(static_cast<size_t>(plan_.splits) * static_cast<size_t>(desc_.m) *
                                    static_cast<size_t>(desc_.n) * sizeof(float),
                                256);
  }

  // "sm80_int8_gemm_t16_s2" (cluster or no split), "sm80_int8_gemm_t16_s2ws" (workspace).
  std::string name() const override {
    return std::string(kSm80Int8GemmName) + "_" + kSm89Fp8Configs[plan_.config].tag + "_s" +
           std::to_string(plan_.splits) + (plan_.split_mode == Sm89Fp8SplitMode::kWorkspace ? "ws" : "");
  }
  std::string weight_layout() const override { return kInt8NkLayout; }
  std::size_t workspace_size() const override { return partial_bytes_; }
  PackedWeight pack(const Int8Tensor& w) const override { return pack_int8_nk(w, desc_, kWho); }

  Status run(const GemmArgs& args, void* workspace, Stream stream) const override {
    auto misaligned = [&](const char* what, int bytes) {
      return Status::Fail(std::string(kWho) + what + " must be " + std::to_string(bytes) + "-byte aligned (" +
                          desc_.describe() + ")");
    };
    // 16 bytes: the cp.async copies of A and W and the 16-byte stores of out (and of the
    // workspace partials); 4 bytes: fp32 / int32 element loads (the bias is read by elements
    // of 2 bytes, 4 is asked so that a misplaced pointer shows early).
    if (!aligned(args.a, 16)) return misaligned("A (activations)", 16);
    if (!aligned(args.w.data, 16)) return misaligned("weight data", 16);
    if (!aligned(args.out, 16)) return misaligned("out", 16);
    if (!aligned(args.a_scales, 4)) return misaligned("A scales", 4);
    if (!aligned(args.w.scales, 4)) return misaligned("weight scales", 4);
    if (desc_.has_bias && !aligned(args.bias, 4)) return misaligned("bias", 4);
    if (desc_.a.int8_zero_point) {
      // Gemm::run() checked a_zeros; the weight row sums are the packed weight's `zeros`.
      if (args.w.zeros == nullptr)
        return Status::Fail(std::string(kWho) + "weight zeros (the row sums of layout int8_nk) is null; " +
                            "activations with a zero point need it (" + desc_.describe() + ")");
      if (!aligned(args.a_zeros, 4)) return misaligned("A zero points", 4);
      if (!aligned(args.w.zeros, 4)) return misaligned("weight zeros (row sums)", 4);
    }
    if (partial_bytes_ > 0 && !aligned(workspace, 16)) return misaligned("workspace", 16);

    int current = 0;
    LOWBIT_CUDA_TRY(cudaGetDevice(&current));
    if (current != device_) LOWBIT_CUDA_TRY(cudaSetDevice(device_));
    const Status s = enqueue(args, workspace, stream);
    if (current != device_) LOWBIT_CUDA_TRY(cudaSetDevice(current));
    return s;
  }

 private:
  Status enqueue(const GemmArgs& args, void* workspace, Stream stream) const {
    Sm89Fp8GemmParams p{};
    p.a = static_cast<const uint8_t*>(args.a);
    p.w = static_cast<const uint8_t*>(args.w.data);
    p.sa = static_cast<const float*>(args.a_scales);
    p.sw = static_cast<const float*>(args.w.scales);
    p.bias = desc_.has_bias ? args.bias : nullptr;
    p.out = args.out;
    p.partials = plan_.split_mode == Sm89Fp8SplitMode::kWorkspace ? static_cast<float*>(workspace) : nullptr;
    p.m = static_cast<int>(desc_.m);
    p.n = static_cast<int>(desc_.n);
    p.k = static_cast<int>(desc_.k);
    p.m4 = static_cast<int>((desc_.m + 3) / 4 * 4);
    p.k_blocks = static_cast<int>((desc_.k + 127) / 128);
    p.n_blocks = static_cast<int>((desc_.n + 127) / 128);
    p.sa_row = 1;  // per token
    p.sw_row = 1;  // per channel
    p.m_tiles = static_cast<int>(m_tiles_);
    p.n_tiles = static_cast<int>(n_tiles_);
    p.split_mode = static_cast<int>(plan_.split_mode);
    p.out_bf16 = desc_.out_dtype == DType::kBF16 ? 1 : 0;
    p.za = desc_.a.int8_zero_point ? static_cast<const int32_t*>(args.a_zeros) : nullptr;
    p.wsum = desc_.a.int8_zero_point ? static_cast<const int32_t*>(args.w.zeros) : nullptr;
    if (Status s = sm80_int8_gemm_kernels().launch(p, plan_.config, plan_.splits, pdl_, stream); !s.ok()) return s;
    // The kernels wrote scaled fp32 partials (sm89_fp8_gemm_epilogue.cuh, int8): the
    // reduction only sums them in split order and adds the bias.
    if (plan_.split_mode == Sm89Fp8SplitMode::kWorkspace)
      return sm89_fp8_gemm_reduce_splits(p, /*partials_scaled=*/true, plan_.splits, stream);
    return Status::Ok();
  }

  GemmDesc desc_;
  int device_;
  Sm80Int8Plan plan_;
  bool pdl_;
  int64_t m_tiles_ = 0, n_tiles_ = 0;
  size_t partial_bytes_ = 0;  // workspace split-K: fp32 partial sums (splits, m, n)
};

}  // namespace

bool sm80_int8_gemm_uses_pdl(const GpuSpec& gpu) {
  const char* env = std::getenv("LOWBIT_INT8_GEMM_PDL");
  if (env != nullptr && env[0] == '0') return false;
  return gpu.cc >= 90 && build_has_code_for(gpu.cc, 90);
}

Status sm80_int8_gemm_runs_on(const GpuSpec& gpu) {
  if (gpu.cc < 80)
    return Status::Fail(std::string(kWho) + "needs compute capability 8.0 or newer (mma.sync with s8 operands, " +
                        "cp.async); " + gpu.name + " is sm_" + std::to_string(gpu.cc));
  if (!build_has_code_for(gpu.cc, 80))
    return Status::Fail(std::string(kWho) + "this build has no sm_80+ code that runs on sm_" + std::to_string(gpu.cc) +
                        " (LOWBIT_CUDA_ARCHITECTURES)");
  return Status::Ok();
}

Status sm80_int8_gemm_can_implement(const GemmDesc& d, const GpuSpec& gpu) {
  (void)gpu;
  if (Status s = int8_gemm_check(d, kWho); !s.ok()) return s;
  auto fail = [&](const std::string& why) { return Status::Fail(std::string(kWho) + why + " (" + d.describe() + ")"); };
  // 32-bit tile and column arithmetic in the kernel; the grid's x dimension counts tiles
  // (k is bounded by int8_gemm_check: exact int32 sums).
  if (d.m > (int64_t{1} << 24)) return fail("needs m <= 2^24, m=" + std::to_string(d.m));
  if (d.n > (int64_t{1} << 24)) return fail("needs n <= 2^24, n=" + std::to_string(d.n));
  if (d.m * d.n > (int64_t{1} << 40)) return fail("needs m * n <= 2^40");
  return Status::Ok();
}

Sm80Int8Plan sm80_int8_gemm_plan(const GemmDesc& d, const GpuSpec& gpu) {
  Sm89Fp8Problem p;
  p.m = d.m;
  p.n = d.n;
  p.k = d.k;
  p.sm_count = gpu.sm_count;
  p.cluster_ok = cluster_split_runs_on(gpu);
  // Occupancy of every configuration of the int8 kernels for this m on this GPU (host-side
  // runtime calls, at construction; also raises each kernel's shared-memory limit).
  const Sm89Fp8GemmKernels& k = sm80_int8_gemm_kernels();
  int current = 0;
  LOWBIT_CUDA_CHECK(cudaGetDevice(&current));
  if (current != gpu.device) LOWBIT_CUDA_CHECK(cudaSetDevice(gpu.device));
  Status s;
  const int mm = occupancy_m(d);
  for (int c = 0; c < kSm89Fp8ConfigCount && s.ok(); ++c) s = k.prepare(c, mm, &p.ctas_per_sm[c]);
  for (int c = 0; c < kSm89Fp8ConfigCount && s.ok() && p.cluster_ok; ++c)
    for (int e = 1; e <= 3 && s.ok() && p.ctas_per_sm[c] > 0; ++e)
      s = k.clusters(c, mm, 1 << e, &p.resident_clusters[c][e]);
  if (current != gpu.device) LOWBIT_CUDA_CHECK(cudaSetDevice(current));
  throw_if_error(s);
  return choose_sm89_fp8_plan(p);
}

std::unique_ptr<detail::GemmImpl> sm80_int8_gemm_make_with_plan(const GemmDesc& desc, const GpuSpec& gpu,
                                                                const Sm80Int8Plan& plan) {
  if (plan.config < 0 || plan.config >= kSm89Fp8ConfigCount || plan.splits < 1 || plan.splits > kSm89Fp8MaxSplits)
    throw Error(std::string(kWho) + "invalid plan: config " + std::to_string(plan.config) + ", splits " +
                std::to_string(plan.splits) + " (configs 0.." + std::to_string(kSm89Fp8ConfigCount - 1) +
                ", splits 1.." + std::to_string(kSm89Fp8MaxSplits) + ")");
  if ((plan.splits > 1) != (plan.split_mode != Sm89Fp8SplitMode::kNone))
    throw Error(std::string(kWho) + "split mode does not match splits=" + std::to_string(plan.splits));
  if (plan.split_mode == Sm89Fp8SplitMode::kCluster && !cluster_split_runs_on(gpu))
    throw Error(std::string(kWho) + "cluster split-K needs sm_90 code for this GPU (sm_" + std::to_string(gpu.cc) +
                ")");
  const Sm89Fp8TileConfig& c = kSm89Fp8Configs[plan.config];
  const int64_t tiles = (desc.m + c.block_m - 1) / c.block_m * ((desc.n + c.block_n - 1) / c.block_n);
  if (tiles >= (int64_t{1} << 31))
    throw Error(std::string(kWho) + "plan " + plan.describe() + " makes " + std::to_string(tiles) +
                " tiles, more than a grid holds (" + desc.describe() + ")");
  // Raise the kernel's dynamic shared-memory limit on the GPU it will run on (per device).
  const Sm89Fp8GemmKernels& k = sm80_int8_gemm_kernels();
  int current = 0, ctas_per_sm = 0;
  LOWBIT_CUDA_CHECK(cudaGetDevice(&current));
  if (current != gpu.device) LOWBIT_CUDA_CHECK(cudaSetDevice(gpu.device));
  const Status s = k.prepare(plan.config, occupancy_m(desc), &ctas_per_sm);
  if (current != gpu.device) LOWBIT_CUDA_CHECK(cudaSetDevice(current));
  throw_if_error(s);
  if (ctas_per_sm < 1)
    throw Error(std::string(kWho) + "configuration " + c.tag + " does not fit one SM of " + gpu.name + " (" +
                std::to_string(k.smem_bytes(plan.config, occupancy_m(desc))) + " bytes of shared memory, " +
                std::to_string(gpu.smem_per_block_optin) + " per block)");
  return std::make_unique<Sm80Int8GemmImpl>(desc, gpu, plan);
}

std::unique_ptr<detail::GemmImpl> sm80_int8_gemm_make(const GemmDesc& desc, const GpuSpec& gpu) {
  return sm80_int8_gemm_make_with_plan(desc, gpu, sm80_int8_gemm_plan(desc, gpu));
}

}  // namespace lowbit::cuda
