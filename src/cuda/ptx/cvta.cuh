// cvta.to.shared (PTX ISA, "Data Movement: cvta"): a generic pointer into shared memory as
// the 32-bit shared-state-space address that ldmatrix, cp.async and ld.shared take.
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

LOWBIT_DEVICE uint32_t cvta_shared(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

}  // namespace lowbit::ptx
