// The int8 activation quantizer (smxx_gemv_act_quant.hpp): one block per token row, two
// passes over the row (the row is small: k * 2 bytes, L1/L2 resident for the second pass).
#include "cuda/gemv/smxx_gemv_act_quant.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "cuda/common/check.hpp"
#include "cuda/ptx/ld_global_nc.cuh"

namespace lowbit::cuda {

namespace {

constexpr int kThreads = 256;

template <bool kBf16>
__device__ __forceinline__ float elem(uint32_t pair, int h) {
  const uint32_t bits = h == 0 ? (pair & 0xFFFFu) : (pair >> 16);
  return kBf16 ? __uint_as_float(bits << 16) : __half2float(__ushort_as_half(static_cast<uint16_t>(bits)));
}

template <bool kBf16>
__global__ void __launch_bounds__(kThreads) smxx_gemv_act_quant_kernel(const uint4* x, int64_t k, int8_t* q,
                                                                       float* scales) {
  const int64_t row = blockIdx.x;
  const int64_t vecs = k / 8;  // 8 elements per 16-byte vector
  const uint4* xr = x + row * vecs;
  // Pass 1: amax of the row.
  float amax = 0.0f;
  for (int64_t v = threadIdx.x; v < vecs; v += kThreads) {
    const uint4 u = ptx::ld_nc_v4(xr + v);
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) amax = fmaxf(amax, fabsf(elem<kBf16>(w[i / 2], i % 2)));
  }
#pragma unroll
  for (int o = 16; o > 0; o /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
  __shared__ float warp_max[kThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x / 32] = amax;
  __syncthreads();
  amax = 0.0f;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) amax = fmaxf(amax, warp_max[w]);
  // IEEE division (not the fast reciprocal): the host's s and x / s bit for bit.
  const float s = __fdiv_rn(fmaxf(amax, 1e-8f), 127.0f);
  if (threadIdx.x == 0) scales[row] = s;
  // Pass 2: codes.
  uint2* qr = reinterpret_cast<uint2*>(q + row * k);
  for (int64_t v = threadIdx.x; v < vecs; v += kThreads) {
    const uint4 u = ptx::ld_nc_v4(xr + v);
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
    uint32_t out[2] = {0, 0};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int c = min(127, max(-127, __float2int_rn(__fdiv_rn(elem<kBf16>(w[i / 2], i % 2), s))));
      out[i / 4] |= (static_cast<uint32_t>(c) & 0xFFu) << (8 * (i % 4));
    }
    qr[v] = make_uint2(out[0], out[1]);
  }
}

}  // namespace

Status gemv_quantize_activations_int8(DType dtype, const void* x, int64_t m, int64_t k, int8_t* q,
                                      float* scales, Stream stream) {
  if (dtype != DType::kF16 && dtype != DType::kBF16)
    return Status::Fail(std::string("lowbit: quantize_activations_int8: activations must be f16 or bf16, not ") +
                        dtype_name(dtype));
  if (m < 1 || k < 8 || k % 8 != 0)
    return Status::Fail("lowbit: quantize_activations_int8: k=" + std::to_string(k) +
                        " must be a positive multiple of 8 (m=" + std::to_string(m) + ")");
  if ((reinterpret_cast<uintptr_t>(x) & 15) != 0 || (reinterpret_cast<uintptr_t>(q) & 7) != 0)
    return Status::Fail("lowbit: quantize_activations_int8: x must be 16-byte and q 8-byte aligned");
  const dim3 grid(static_cast<unsigned>(m));
  if (dtype == DType::kBF16)
    smxx_gemv_act_quant_kernel<true><<<grid, kThreads, 0, stream>>>(static_cast<const uint4*>(x), k, q, scales);
  else
    smxx_gemv_act_quant_kernel<false><<<grid, kThreads, 0, stream>>>(static_cast<const uint4*>(x), k, q, scales);
  LOWBIT_CUDA_TRY_LAUNCH();
  return Status::Ok();
}

}  // namespace lowbit::cuda
