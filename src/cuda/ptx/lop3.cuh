// lop3.b32: any three-input bitwise function in one instruction (PTX ISA, "Logic and Shift
// Instructions: lop3"). The 8-bit immediate is the truth table evaluated on the operand
// patterns a = 0xF0, b = 0xCC, c = 0xAA; e.g. (a & b) | c is (0xF0 & 0xCC) | 0xAA = 0xEA.
// Host-callable (see smxx_config.hpp): the host computes the same truth table bit by bit.
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

// The LUT of (a & b) | c: mask a field out of a and merge it with a constant pattern c.
inline constexpr uint8_t kLutAndOr = (0xF0 & 0xCC) | 0xAA;
// The LUT of (a & b) ^ c: mask a field out of a and flip it into a constant pattern c.
inline constexpr uint8_t kLutAndXor = (0xF0 & 0xCC) ^ 0xAA;

template <uint8_t kLut>
LOWBIT_HD uint32_t lop3(uint32_t a, uint32_t b, uint32_t c) {
#if LOWBIT_DEVICE_CODE
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(kLut));
  return d;
#else
  // Bit i of the LUT is the result for (a, b, c) = (i >> 2 & 1, i >> 1 & 1, i & 1).
  uint32_t d = 0;
  for (int i = 0; i < 8; ++i) {
    if (((kLut >> i) & 1) == 0) continue;
    const uint32_t ma = (i & 4) ? a : ~a;
    const uint32_t mb = (i & 2) ? b : ~b;
    const uint32_t mc = (i & 1) ? c : ~c;
    d |= ma & mb & mc;
  }
  return d;
#endif
}

}  // namespace lowbit::ptx
