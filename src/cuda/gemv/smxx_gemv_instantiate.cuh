// Internal: instantiates the rows of kGemvKernels (smxx_gemv_heuristic.hpp) of one width.
// Included by exactly one translation unit per width (smxx_gemv_w<bits>.cu): the table is
// the single list of what is compiled.
#pragma once

#include <cstddef>
#include <utility>

#include "cuda/gemv/smxx_gemv.cuh"
#include "cuda/gemv/smxx_gemv_kernels.hpp"
#include "cuda/heuristics/smxx_gemv_heuristic.hpp"

namespace lowbit::gemv::instantiate {

template <int kBits, int kRow>
const void* row_kernel() {
  constexpr GemvKernelRow r = kGemvKernels[kRow];
  if constexpr (r.bits == kBits) {
    return reinterpret_cast<const void*>(&smxx_gemv_kernel<r.bits, r.act, r.slots, r.layout, r.stage_x != 0, r.cluster != 0>);
  } else {
    return nullptr;
  }
}

template <int kBits, std::size_t... I>
const void* kernel_of_row(int row, std::index_sequence<I...>) {
  static const void* const table[] = {row_kernel<kBits, static_cast<int>(I)>()...};
  return table[row];
}

template <int kBits>
const void* kernel_of_row(int row) {
  return kernel_of_row<kBits>(row, std::make_index_sequence<kGemvKernelCount>{});
}

}  // namespace lowbit::gemv::instantiate
