// The sm90 mixed GEMM kernels for bf16 activations and 4-bit weights: every row of
// kSm90MixedConfigs. One translation unit per (dtype, bits) so the four compile in parallel.
#include "cuda/mixed_gemm/sm90_mixed_gemm_launch.cuh"

namespace lowbit::cuda {

const Sm90MixedKernels& sm90_mixed_gemm_kernels_bf16_w4() { return sm90mixed::kernels<__nv_bfloat16, 4>(); }

}  // namespace lowbit::cuda
