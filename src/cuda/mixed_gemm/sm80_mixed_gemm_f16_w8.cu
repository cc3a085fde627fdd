// The sm80 mixed GEMM kernels for f16 activations and 8-bit weights: every row of
// kMixedGemmConfigs. One translation unit per (dtype, bits) so the four compile in parallel.
#include "cuda/mixed_gemm/sm80_mixed_gemm_launch.cuh"

namespace lowbit::cuda {

const MixedGemmKernels& sm80_mixed_gemm_kernels_f16_w8() { return mixed_gemm_kernels<__half, 8>(); }

}  // namespace lowbit::cuda
