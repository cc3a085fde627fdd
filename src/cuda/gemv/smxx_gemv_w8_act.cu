// The 8-bit GEMV kernels for act-order weights: the rows of kGemvKernels with bits = 8 and
// act_order = 1 (smxx_gemv_heuristic.hpp), apart from smxx_gemv_w8.cu so that both compile in
// parallel.
#include "cuda/gemv/smxx_gemv_instantiate.cuh"

namespace lowbit::gemv {

const void* gemv_kernel_w8_act(int row) { return instantiate::kernel_of_row<8, true>(row); }

}  // namespace lowbit::gemv
