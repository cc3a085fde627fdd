// The cuBLAS baseline family, "cublas_baseline": lowbit's GEMM computed by cuBLASLt.
//
// It is the yardstick of every lowbit kernel (ratios in benchmarks are against it) and the
// fallback for dense and fp8 problems no specialised family takes.
//
// Operand mapping. lowbit computes out(m, n) = A(m, k) * W(n, k)^T (+ bias(n)), all
// row-major. cuBLAS is column-major, so the same bytes are read as
//     out^T (n x m, ld n) = op_T(W as k x n, ld k) * op_N(A^T as k x m, ld k)
// i.e. cuBLAS' (m, n, k) = lowbit's (n, m, k), cuBLAS' "A" is lowbit's W and cuBLAS' "B" is
// lowbit's activations. This is the "TN" form fp8 requires (cublasLtMatmul(), "To use tensor-
// or block-scaled FP8 kernels": A transposed, B not), used for every dtype.
//
// What it computes (can_implement() refuses the rest with the reason):
//   dense: a = w = f16 -> out f16 or f32;  bf16 -> bf16 or f32 (sm_80+);  f32 -> f32
//          (CUBLAS_COMPUTE_32F, no TF32). Bias in the output dtype (CUBLASLT_EPILOGUE_BIAS).
//   fp8:   sm_89+; (W, A) in e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3 (no e5m2 x e5m2);
//          out bf16 / f16 / f32; bias only for bf16/f16 out (cuBLASLt takes a bf16 bias with
//          f32 output, lowbit's bias is in the output dtype); K % 16 == 0 and
//          N * sizeof(out) % 16 == 0 (cuBLAS "Tensor Core Usage": fp8 needs 16-byte aligned
//          dimensions and leading dimensions).
//   fp8 scaling modes, cuBLAS docs "Narrow Precision Data Types Usage" (3.1.4):
//     act tensor + W tensor          SCALAR_32F x SCALAR_32F          cc 8.9+
//     act row    + W row | tensor    OUTER_VEC_32F x OUTER_VEC_32F    cc 9.0 only
//     act 1x128  + W 128x128         VEC128_32F (B) x BLK128x128_32F (A)   cc 9.0 only
//     act 1x128  + W 1x128|row|tensor VEC128_32F x VEC128_32F         cc 9.0 only
//   Outer-vector and block modes need cuBLASLt 12.9+ (runtime check) and both sides in one
//   family of modes (outer vectors pair only with outer vectors; BLK128x128 only with
//   VEC128, never BLK x BLK). Block modes further need cuBLAS' M and N (lowbit's n and m)
//   to be multiples of 4 (docs 3.1.4.5.1), so m = 1 is refused.
//
// Weight layouts (Gemm::weight_layout(); pack() produces them on the host):
//   "dense_nk"        data = W (n, k) row-major in its dtype (a copy).
//   fp8: data = codes (n, k) row-major, and scales fp32 as cuBLASLt reads them:
//   "fp8_nk"          scales exactly Fp8Tensor::scales ((1) tensor, (n) row).
//   "fp8_nk_rowvec"   W tensor scale broadcast to (n): outer-vector mode with row activations.
//   "fp8_nk_vec128"   (ceil(k/128), n) row-major, n contiguous ("M-major M x L", docs
//                     3.1.4.5.1), from W 1x128 (a transpose of lowbit's (n, ceil(k/128))),
//                     row or tensor scales (broadcast).
//   "fp8_nk_blk128"   (ceil(n/128), L4) row-major with L4 = ceil(ceil(k/128) / 4) * 4 and
//                     zero padding: "K-major, L4 x ceil(M/128), column stride a multiple of
//                     4" (docs 3.1.4.5.1); lowbit's (ceil(n/128), ceil(k/128)) grid padded.
// The layout depends on the activation scaling too (it picks the cuBLASLt mode), never on m.
//
// Activation scales (GemmArgs::a_scales) are in run()'s layout (gemm.hpp gemm_a_scales()):
// (1), (m), or for 1x128 (ceil(k/128), round_up(m, 4)) K-block-major, which is cuBLASLt's
// "N-major" VEC128 layout for its B operand whenever m % 4 == 0 (required by its block mode):
// they are passed through untouched.

// Caller's duties (run() checks them and returns a failed Status): A, W data, out and bias
// pointers 16-byte aligned (the heuristic is asked for algorithms that need no more: the
// CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES preferences); fp8 scale vectors/grids 16-byte
// aligned (docs 3.1.4.5.1), a scalar scale 4-byte aligned; workspace 256-byte aligned
// (cublasLtMatmul()'s rule; cudaMalloc gives that).
//
// Plan and run. The cuBLASLt handle (one per device, shared, thread-safe), matrix layouts,
// heuristic algorithm and workspace size (cap 32 MiB) are fixed at construction. run() builds
// the matmul descriptor on its own stack (cublasLtMatmulDescInit, no heap), sets the pointer
// attributes and calls cublasLtMatmul on the caller's stream with the caller's workspace:
// no allocation, no synchronisation, no printing; capturable in a CUDA graph and safe to call
// concurrently on different streams (each with its own workspace).
#pragma once

#include <memory>

#include "api/gemm_impl.hpp"
#include "cuda/heuristics/gpu_spec.hpp"

namespace lowbit::cuda {

inline constexpr const char* kCublasBaselineName = "cublas_baseline";
inline constexpr const char* kCublasBaselineDescription =
    "cuBLASLt: dense f16/bf16/f32 and fp8 e4m3/e5m2 per-tensor (+ row-wise and 1x128/128x128 "
    "block-scaled on sm_90)";

// Ok on every GPU: cuBLASLt ships its own machine code, independent of this build's archs.
Status cublas_baseline_runs_on(const GpuSpec& gpu);
// The rules of the header comment above.
Status cublas_baseline_can_implement(const GemmDesc& desc, const GpuSpec& gpu);
// Plans the cuBLASLt call; throws lowbit::Error when cuBLASLt has no algorithm for it.
std::unique_ptr<detail::GemmImpl> cublas_baseline_make(const GemmDesc& desc, const GpuSpec& gpu);

}  // namespace lowbit::cuda
