// The 6-bit GEMV kernels: the rows of kGemvKernels with bits = 6 (smxx_gemv_heuristic.hpp).
#include "cuda/gemv/smxx_gemv_instantiate.cuh"

namespace lowbit::gemv {

const void* gemv_kernel_w6(int row) { return instantiate::kernel_of_row<6>(row); }

}  // namespace lowbit::gemv
