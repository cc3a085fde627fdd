// The sm89 fp8 GEMM kernels of the block mode (A 1x128 x W 128x128 scales, applied to each
// 128-wide k block's fp32 partial sum in the main loop): every row of kSm89Fp8Configs.
#include "cuda/fp8_gemm/sm89_fp8_gemm_launch.cuh"

namespace lowbit::cuda {

const Sm89Fp8GemmKernels& sm89_fp8_gemm_kernels_block() { return sm89_fp8_gemm_kernels<true>(); }

}  // namespace lowbit::cuda
