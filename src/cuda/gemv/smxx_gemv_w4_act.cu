// The 4-bit GEMV kernels for act-order weights: the rows of kGemvKernels with bits = 4 and
// act_order = 1 (smxx_gemv_heuristic.hpp), apart from smxx_gemv_w4.cu so that both compile in
// parallel.
#include "cuda/gemv/smxx_gemv_instantiate.cuh"

namespace lowbit::gemv {

const void* gemv_kernel_w4_act(int row) { return instantiate::kernel_of_row<4, true>(row); }

}  // namespace lowbit::gemv
