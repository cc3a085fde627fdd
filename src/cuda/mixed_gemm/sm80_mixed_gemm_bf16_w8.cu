// The sm80 mixed GEMM kernels for bf16 activations and 8-bit weights: every row of
// kMixedGemmConfigs. One translation unit per (dtype, bits) so the four compile in parallel.
#include "cuda/mixed_gemm/sm80_mixed_gemm_launch.cuh"

namespace lowbit::cuda {

const MixedGemmKernels& sm80_mixed_gemm_kernels_bf16_w8() { return mixed_gemm_kernels<__nv_bfloat16, 8>(); }

}  // namespace lowbit::cuda
