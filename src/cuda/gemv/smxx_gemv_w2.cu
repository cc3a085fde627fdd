// The 2-bit GEMV kernels: the rows of kGemvKernels with bits = 2 (smxx_gemv_heuristic.hpp).
#include "cuda/gemv/smxx_gemv_instantiate.cuh"

namespace lowbit::gemv {

const void* gemv_kernel_w2(int row) { return instantiate::kernel_of_row<2>(row); }

}  // namespace lowbit::gemv
