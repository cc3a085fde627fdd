// The 1-bit GEMV kernels: the rows of kGemvKernels with bits = 1 (smxx_gemv_heuristic.hpp).
#include "cuda/gemv/smxx_gemv_instantiate.cuh"

namespace lowbit::gemv {

const void* gemv_kernel_w1(int row) { return instantiate::kernel_of_row<1>(row); }

}  // namespace lowbit::gemv
