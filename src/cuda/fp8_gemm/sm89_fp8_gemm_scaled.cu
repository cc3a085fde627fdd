// The sm89 fp8 GEMM kernels of the scaled mode (A tensor|row x W tensor|row scales, applied
// in the epilogue): every row of kSm89Fp8Configs. One translation unit per scaling mode so
// the two compile in parallel.
#include "cuda/fp8_gemm/sm89_fp8_gemm_launch.cuh"

namespace lowbit::cuda {

const Sm89Fp8GemmKernels& sm89_fp8_gemm_kernels_scaled() { return sm89_fp8_gemm_kernels<false>(); }

}  // namespace lowbit::cuda
