// prmt.b32 (default mode): byte permute (PTX ISA, "Data Movement: prmt"). The eight bytes
// {b, a} are numbered 0..3 (a) and 4..7 (b); nibble j of the selector picks byte j of the
// result (bits 0..2: which byte; bit 3: replicate that byte's sign bit instead).
// Used to splice integer codes into the mantissa of a float pattern (int -> f16/bf16/f32
// without a conversion instruction) and to broadcast 16-bit halves.
// Host-callable (see smxx_config.hpp).
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

LOWBIT_HD uint32_t prmt(uint32_t a, uint32_t b, uint32_t selector) {
#if LOWBIT_DEVICE_CODE
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(selector));
  return d;
#else
  const uint64_t bytes = (static_cast<uint64_t>(b) << 32) | a;
  uint32_t d = 0;
  for (int j = 0; j < 4; ++j) {
    const uint32_t sel = (selector >> (4 * j)) & 0xF;
    uint32_t byte = static_cast<uint32_t>(bytes >> (8 * (sel & 7))) & 0xFF;
    if (sel & 8) byte = (byte & 0x80) ? 0xFF : 0x00;
    d |= byte << (8 * j);
  }
  return d;
#endif
}

}  // namespace lowbit::ptx
