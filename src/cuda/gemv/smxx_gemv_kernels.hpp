// Internal: the kernel pointers of the rows of kGemvKernels (smxx_gemv_heuristic.hpp), one
// function per width, each defined in its own translation unit (smxx_gemv_w<bits>.cu) so
// the 64 kernels compile in parallel. Host code; no CUDA headers.
#pragma once

#include "cuda/heuristics/smxx_gemv_heuristic.hpp"

namespace lowbit::gemv {

const void* gemv_kernel_w1(int row);
const void* gemv_kernel_w2(int row);
const void* gemv_kernel_w3(int row);
const void* gemv_kernel_w4(int row);
const void* gemv_kernel_w5(int row);
const void* gemv_kernel_w6(int row);
const void* gemv_kernel_w8(int row);
const void* gemv_kernel_w4_act(int row);  // the act-order rows
const void* gemv_kernel_w8_act(int row);

// The kernel of table row `row` (0 <= row < kGemvKernelCount).
inline const void* gemv_kernel(int row) {
  if (kGemvKernels[row].act_order != 0) {
    return kGemvKernels[row].bits == 4 ? gemv_kernel_w4_act(row)
           : kGemvKernels[row].bits == 8 ? gemv_kernel_w8_act(row)
                                          : nullptr;
  }
  switch (kGemvKernels[row].bits) {
    case 1: return gemv_kernel_w1(row);
    case 2: return gemv_kernel_w2(row);
    case 3: return gemv_kernel_w3(row);
    case 4: return gemv_kernel_w4(row);
    case 5: return gemv_kernel_w5(row);
    case 6: return gemv_kernel_w6(row);
    case 8: return gemv_kernel_w8(row);
    default: return nullptr;
  }
}

}  // namespace lowbit::gemv
