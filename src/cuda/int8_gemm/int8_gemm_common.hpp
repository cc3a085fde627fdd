// What lowbit's int8 W8A8 GEMM kernels (sm90_int8_gemm, sm80_int8_gemm) share: the problems
// they take and the weight layout both read.
//
//   out[m, n] = sa[m] * sw[n] * (sum_k A[m, k] W[n, k] - za[m] * wsum[n]) (+ bias[n])
//
// A int8 (m, k) with a per-token fp32 scale sa and an optional int32 zero point za in
// [-128, 127] (docs/formats.md section 4: X = (q - z) * s); W int8 (n, k), symmetric, per-
// channel fp32 scale sw. The sum over k is the tensor core's exact int32 sum; the zero-point
// term uses the weight row sums wsum[n] = sum_k W[n, k], precomputed at pack time, so the
// subtraction is exact too (in int64); the result is converted to fp32 once and scaled as
// (x * sa[m]) * sw[n], then the bias is added and the sum rounded to the output dtype. With
// split-K each split's partial is converted and scaled so (the zero-point term in split 0
// only) and the partials are added in fp32 in split order: deterministic.
//
// Range: |A W| <= 128 * 128 = 2^14 per product, so the int32 sum is exact for k < 2^17
// (int8_gemm_check refuses larger k).
//
// Weight layout "int8_nk" (both families): `data` = the canonical int8 codes (n, k)
// row-major (K-major: what mma.sync and wgmma read for 8-bit operands), `scales` = fp32 (n),
// `zeros` = int32 (n) row sums wsum (used when the activations have a zero point).
#pragma once

#include <cstdint>
#include <string>

#include "lowbit/gemm.hpp"

namespace lowbit::cuda {

inline constexpr const char* kInt8NkLayout = "int8_nk";
// The largest k whose int32 sums cannot overflow (header comment).
inline constexpr int64_t kInt8GemmMaxK = (int64_t(1) << 17) - 16;

// Ok when A/W/out/bias/shape fit the common contract of our int8 kernels, else the reason,
// prefixed with `who` ("lowbit: sm90_int8_gemm: "):
//   A int8 (per-token scale, zero point optional), W int8 per-channel; out f16 or bf16;
//   bias optional (out dtype); m >= 1; n and k multiples of 16 (16-byte rows for the
//   16-byte / TMA loads of A and W and the output's 16-byte stores); k <= kInt8GemmMaxK.
Status int8_gemm_check(const GemmDesc& desc, const std::string& who);

// The canonical int8 weight -> layout "int8_nk" (checks it matches desc: n, k, symmetric).
PackedWeight pack_int8_nk(const Int8Tensor& w, const GemmDesc& desc, const std::string& who);

}  // namespace lowbit::cuda
