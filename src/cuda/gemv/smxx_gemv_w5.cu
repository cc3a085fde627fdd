// The 5-bit GEMV kernels: the rows of kGemvKernels with bits = 5 (smxx_gemv_heuristic.hpp).
#include "cuda/gemv/smxx_gemv_instantiate.cuh"

namespace lowbit::gemv {

const void* gemv_kernel_w5(int row) { return instantiate::kernel_of_row<5>(row); }

}  // namespace lowbit::gemv
