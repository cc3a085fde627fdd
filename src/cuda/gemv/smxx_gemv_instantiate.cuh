// Internal: instantiates the rows of kGemvKernels (smxx_gemv_heuristic.hpp) of one width.
// Included by exactly one translation unit per width (smxx_gemv_w<bits>.cu), and for 4 and 8
// bits one more for the act-order rows (smxx_gemv_w<bits>_act.cu): the table is the single list
// of what is compiled.
#pragma once

#include <cstddef>
#include <utility>

#include "cuda/gemv/smxx_gemv.cuh"
#include "cuda/gemv/smxx_gemv_kernels.hpp"
#include "cuda/heuristics/smxx_gemv_heuristic.hpp"

namespace lowbit::gemv::instantiate {

// kActOrder: the act-order rows (their own translation units, smxx_gemv_w<bits>_act.cu) or the
// others.
template <int kBits, bool kActOrder, int kRow>
const void* row_kernel() {
  constexpr GemvKernelRow r = kGemvKernels[kRow];
  if constexpr (r.bits == kBits && (r.act_order != 0) == kActOrder) {
    return reinterpret_cast<const void*>(
        &smxx_gemv_kernel<r.bits, r.act, r.slots, r.layout, r.stage_x != 0, r.cluster != 0, r.act_order != 0,
                          r.act_order == 2>);
  } else {
    return nullptr;
  }
}

template <int kBits, bool kActOrder, std::size_t... I>
const void* kernel_of_row(int row, std::index_sequence<I...>) {
  static const void* const table[] = {row_kernel<kBits, kActOrder, static_cast<int>(I)>()...};
  return table[row];
}

template <int kBits, bool kActOrder = false>
const void* kernel_of_row(int row) {
  return kernel_of_row<kBits, kActOrder>(row, std::make_index_sequence<kGemvKernelCount>{});
}

}  // namespace lowbit::gemv::instantiate
