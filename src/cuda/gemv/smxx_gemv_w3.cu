// The 3-bit GEMV kernels: the rows of kGemvKernels with bits = 3 (smxx_gemv_heuristic.hpp).
#include "cuda/gemv/smxx_gemv_instantiate.cuh"

namespace lowbit::gemv {

const void* gemv_kernel_w3(int row) { return instantiate::kernel_of_row<3>(row); }

}  // namespace lowbit::gemv
