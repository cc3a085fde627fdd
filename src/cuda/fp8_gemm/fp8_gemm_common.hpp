// What lowbit's own fp8 GEMM kernels (sm89_fp8_gemm, sm90_fp8_gemm) share: the problems they
// take, the scaling mode a problem runs in, and the weight layout both read.
//
//   out[m, n] = epilogue( sum_k A[m, k] W[n, k] ), A and W e4m3fn, fp32 accumulation.
//
// Scaling modes (docs/kernels/fp8_gemm.md):
//   kScaled  A per-tensor or per-row (token) x W per-tensor or per-row (channel):
//            out = (acc * sa[m]) * sw[n] (+ bias), in fp32, once per output (a tensor scale
//            is the same value for every m / n).
//   kBlock   A 1x128 (per row, per 128 columns of K) x W 128x128 (per 128 rows, 128 columns):
//            out = sum_kb (acc_kb * (sa[m, kb] * sw[n / 128, kb])) (+ bias), where acc_kb is
//            the fp32 tensor-core sum over one 128-wide K block; the block sums are scaled
//            and added in fp32 registers (never accumulated across blocks in the tensor
//            core's accumulator).
// Other pairings (e.g. A 1x128 x W per-row) are refused; cublas_baseline still takes some.
//
// Weight layout "fp8_nk" (both families): `data` = the canonical e4m3 codes (n, k) row-major
// (K-major: what both mma.sync and wgmma read for 8-bit operands), `scales` = the canonical
// fp32 scale grid of the Fp8Tensor unchanged: (1) tensor, (n) row, (ceil(n/128),
// ceil(k/128)) row-major for 128x128.
#pragma once

#include <cstdint>
#include <string>

#include "lowbit/gemm.hpp"

namespace lowbit::cuda {

enum class Fp8GemmMode : uint8_t { kScaled, kBlock };

inline constexpr const char* kFp8NkLayout = "fp8_nk";

// Ok when A/W/out/bias/shape fit the common contract of our fp8 kernels, else the reason,
// prefixed with `who` ("lowbit: sm90_fp8_gemm: "):
//   A and W e4m3fn; out f16 or bf16; bias optional (out dtype);
//   scalings: A {tensor,row} x W {tensor,row}, or A 1x128 x W 128x128;
//   m >= 1; n and k multiples of 16 (16-byte rows for the 16-byte / TMA loads of A and W
//   and for the output's 16-byte stores).
Status fp8_gemm_check(const GemmDesc& desc, const std::string& who);

// The mode of a problem that passed fp8_gemm_check().
Fp8GemmMode fp8_gemm_mode(const GemmDesc& desc);

// Number of 128-wide K blocks (block mode's scale columns).
inline int64_t fp8_k_blocks(int64_t k) { return (k + 127) / 128; }

// The canonical fp8 weight -> layout "fp8_nk" (checks it matches desc: format, n, k).
PackedWeight pack_fp8_nk(const Fp8Tensor& w, const GemmDesc& desc, const std::string& who);

}  // namespace lowbit::cuda
