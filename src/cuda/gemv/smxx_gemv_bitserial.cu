// The bit-serial GEMV kernels (m = 1): 1- and 2-bit weights x scale slots (group 32, 64, 128,
// per-channel), and the activation-plane kernel per width (smxx_gemv_bitserial.cuh).
#include "cuda/gemv/smxx_gemv_bitserial.cuh"
#include "cuda/gemv/smxx_gemv_bitserial.hpp"

namespace lowbit::gemv {

namespace {

template <int kBits>
const void* by_slots(int slots) {
  switch (slots) {
    case 8: return reinterpret_cast<const void*>(&bitserial_gemv_kernel<kBits, 8>);
    case 4: return reinterpret_cast<const void*>(&bitserial_gemv_kernel<kBits, 4>);
    case 2: return reinterpret_cast<const void*>(&bitserial_gemv_kernel<kBits, 2>);
    case 1: return reinterpret_cast<const void*>(&bitserial_gemv_kernel<kBits, 1>);
    default: return nullptr;
  }
}

}  // namespace

const void* bitserial_gemv_kernel(int bits, int slots) {
  return bits == 1 ? by_slots<1>(slots) : bits == 2 ? by_slots<2>(slots) : nullptr;
}

const void* bitserial_xplanes_kernel(int bits) {
  return bits == 1   ? reinterpret_cast<const void*>(&bitserial_xplanes_kernel<1>)
         : bits == 2 ? reinterpret_cast<const void*>(&bitserial_xplanes_kernel<2>)
                     : nullptr;
}

}  // namespace lowbit::gemv
