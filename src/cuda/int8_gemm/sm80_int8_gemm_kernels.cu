// The sm80_int8_gemm kernels: the sm89 fp8 GEMM template over int8 operands (scaled mode,
// mma.sync m16n8k32 s8.s8, exact int32 accumulation), every row of kSm89Fp8Configs. Unlike
// the e4m3 kernels these have real code in the sm_80 image too (sm89_fp8_gemm.cuh, kernel
// entry). One translation unit, compiled beside the fp8 ones.
#include "cuda/fp8_gemm/sm89_fp8_gemm_launch.cuh"

namespace lowbit::cuda {

const Sm89Fp8GemmKernels& sm80_int8_gemm_kernels() {
  return sm89_fp8_gemm_kernels<false, Sm89Fp8Element::kInt8>();
}

}  // namespace lowbit::cuda
