// On-device repack into the tiled layout (include/lowbit/pack.hpp, repack_tiled_on_device):
// from the canonical form or straight from GPTQ / AWQ checkpoint tensors
// (include/lowbit/import.hpp states their conventions). Produces the same bytes as the host
// packer (pack_tiled) — tests/gpu/test_sm80_mixed_gemm.cpp checks it bit for bit.
//
// One thread writes one lane's 16 bytes of one chunk, gathering its 32 (4-bit) or 16
// (8-bit) codes from the source by the positions of smxx_tiled_layout.hpp. smxx_: plain
// CUDA, runs on any architecture.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/dequant/smxx_tiled_layout.hpp"
#include "lowbit/import.hpp"
#include "lowbit/pack.hpp"

namespace lowbit {

namespace {

struct RepackView {
  int bits;
  int64_t n, k;           // weight shape (original k)
  int64_t kp;             // packed columns (k' with act-order, else k)
  int64_t groups;         // original groups
  int group_size;         // 0 = per-channel
  RepackSource source;
  bool gptq_v1;
  bool int_zero;          // target has integer zero points
  int sym_zero;           // 2^(bits-1)
  const void* codes;
  const void* scales;
  const void* zeros;
  const int32_t* perm;    // act-order or null
  const int32_t* group_of;
};

__device__ uint32_t field(uint32_t word, int index, int bits) {
  return (word >> (index * bits)) & ((1u << bits) - 1);
}

// AWQ: nibble holding column 8c + j is kAwqInverse[j] ({0, 4, 1, 5, 2, 6, 3, 7}).
__device__ int awq_nibble(int j) { return (j % 2) * 4 + j / 2; }

__device__ uint32_t source_zero(const RepackView& v, int64_t row, int64_t g) {
  if (!v.int_zero) return static_cast<uint32_t>(v.sym_zero);
  switch (v.source) {
    case RepackSource::kCanonical:
      return static_cast<const uint8_t*>(v.zeros)[row * v.groups + g];
    case RepackSource::kGptq: {
      const int p = 32 / v.bits;
      const uint32_t w = static_cast<const uint32_t*>(v.zeros)[g * (v.n / p) + row / p];
      return field(w, static_cast<int>(row % p), v.bits) + (v.gptq_v1 ? 1u : 0u);
    }
    case RepackSource::kAwq: {
      const uint32_t w = static_cast<const uint32_t*>(v.zeros)[g * (v.n / 8) + row / 8];
      return field(w, awq_nibble(static_cast<int>(row % 8)), 4);
    }
  }
  return 0;
}

__device__ uint32_t source_code(const RepackView& v, int64_t row, int64_t col) {
  switch (v.source) {
    case RepackSource::kCanonical:
      return static_cast<const uint8_t*>(v.codes)[row * v.k + col];
    case RepackSource::kGptq: {
      const int p = 32 / v.bits;
      const uint32_t w = static_cast<const uint32_t*>(v.codes)[(col / p) * v.n + row];
      return field(w, static_cast<int>(col % p), v.bits);
    }
    case RepackSource::kAwq: {
      const uint32_t w = static_cast<const uint32_t*>(v.codes)[col * (v.n / 8) + row / 8];
      return field(w, awq_nibble(static_cast<int>(row % 8)), 4);
    }
  }
  return 0;
}

__global__ void repack_codes_kernel(RepackView v, uint4* dst) {
  const int ck = tiled::chunk_k(v.bits);
  const int64_t lanes = (v.n / 16) * (v.kp / ck) * tiled::kLanes;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < lanes;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // i enumerates (strip, chunk, lane) in memory order, so dst[i] is this lane's chunk.
    const int lane = static_cast<int>(i % tiled::kLanes);
    const int64_t kc = (i / tiled::kLanes) % (v.kp / ck);
    const int64_t strip = i / tiled::kLanes / (v.kp / ck);
    uint32_t words[4] = {0, 0, 0, 0};
    const int per_word = 32 / v.bits;
    for (int e = 0; e < 4 * per_word; ++e) {
      const int word = e / per_word, sub = e % per_word;
      const tiled::Pos pos = v.bits == 4 ? tiled::w4_code_pos(lane, word, sub) : tiled::w8_code_pos(lane, word, sub);
      const int64_t row = strip * 16 + pos.n;
      const int64_t pcol = kc * ck + pos.k;
      const int64_t col = v.perm != nullptr ? v.perm[pcol] : pcol;
      uint32_t q;
      if (col >= 0) {
        q = source_code(v, row, col);
      } else {  // act-order padding: the zero point's code, so the weight is exactly 0
        const int64_t pg = v.group_size == 0 ? 0 : pcol / v.group_size;
        q = source_zero(v, row, v.group_of != nullptr ? v.group_of[pg] : pg);
      }
      words[word] |= q << (sub * v.bits);
    }
    dst[i] = make_uint4(words[0], words[1], words[2], words[3]);
  }
}

template <typename T>
__device__ T from_f32(float x);
template <>
__device__ __half from_f32<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

template <typename T>
__global__ void repack_scales_kernel(RepackView v, int64_t groups_packed, T* dst_scales, uint8_t* dst_zeros) {
  const int64_t total = groups_packed * v.n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t pg = i / v.n, row = i % v.n;
    const int64_t g = v.group_of != nullptr ? v.group_of[pg] : pg;
    T s;
    if (v.source == RepackSource::kCanonical)
      s = from_f32<T>(static_cast<const float*>(v.scales)[row * v.groups + g]);  // exact: representable
    else
      s = static_cast<const T*>(v.scales)[g * v.n + row];
    const int64_t d = tiled::scale_index(v.n, pg, row);
    dst_scales[d] = s;
    if (v.int_zero) dst_zeros[d] = static_cast<uint8_t>(source_zero(v, row, g));
  }
}

int grid_for(int64_t items, int threads) {
  const int64_t blocks = (items + threads - 1) / threads;
  return static_cast<int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

}  // namespace

Status repack_tiled_on_device(const DeviceRepackArgs& a, Stream stream) {
  const IntWeightFormat& f = a.format;
  if (Status s = tiled_layout_supports(f, a.n, a.k); !s.ok()) return s;
  auto fail = [](const std::string& m) { return Status::Fail("lowbit: repack_tiled_on_device: " + m); };
  if (a.codes == nullptr || a.scales == nullptr || a.data == nullptr || a.packed_scales == nullptr)
    return fail("codes, scales, data and packed_scales must be set");
  const bool int_zero = f.zero == ZeroPoint::kInteger;
  if (int_zero && (a.zeros == nullptr || a.packed_zeros == nullptr))
    return fail("integer zero points need zeros and packed_zeros");
  if (a.source == RepackSource::kAwq && (f.bits != 4 || f.act_order))
    return fail("AWQ sources are 4-bit without act-order");
  if (a.source == RepackSource::kAwq && a.n % 8 != 0) return fail("AWQ needs n % 8 == 0");
  if (f.act_order && (a.perm == nullptr || a.group_of == nullptr || a.k_packed <= 0 || a.k_packed % 64 != 0))
    return fail("act-order needs perm, group_of and k_packed (a multiple of 64) from plan_tiled_act_order()");
  RepackView v;
  v.bits = f.bits;
  v.n = a.n;
  v.k = a.k;
  v.kp = f.act_order ? a.k_packed : a.k;
  v.group_size = f.group_size;
  v.groups = f.group_size == 0 ? 1 : a.k / f.group_size;
  v.source = a.source;
  v.gptq_v1 = a.gptq_v1_zeros;
  v.int_zero = int_zero;
  v.sym_zero = f.symmetric_zero();
  v.codes = a.codes;
  v.scales = a.scales;
  v.zeros = a.zeros;
  v.perm = f.act_order ? a.perm : nullptr;
  v.group_of = f.act_order ? a.group_of : nullptr;
  const int64_t groups_packed = f.act_order ? a.groups_packed : v.groups;

  const int threads = 256;
  const int64_t lanes = (a.n / 16) * (v.kp / tiled::chunk_k(f.bits)) * tiled::kLanes;
  repack_codes_kernel<<<grid_for(lanes, threads), threads, 0, stream>>>(v, static_cast<uint4*>(a.data));
  LOWBIT_CUDA_TRY_LAUNCH();
  const int grid = grid_for(groups_packed * a.n, threads);
  if (f.scale_dtype == DType::kF16)
    repack_scales_kernel<__half><<<grid, threads, 0, stream>>>(v, groups_packed, static_cast<__half*>(a.packed_scales),
                                                              static_cast<uint8_t*>(a.packed_zeros));
  else
    repack_scales_kernel<__nv_bfloat16><<<grid, threads, 0, stream>>>(
        v, groups_packed, static_cast<__nv_bfloat16*>(a.packed_scales), static_cast<uint8_t*>(a.packed_zeros));
  LOWBIT_CUDA_TRY_LAUNCH();
  return Status::Ok();
}

}  // namespace lowbit
