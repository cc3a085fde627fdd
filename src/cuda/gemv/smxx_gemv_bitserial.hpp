// Internal: the bit-serial GEMV's kernels (smxx_gemv_bitserial.cuh), instantiated in
// smxx_gemv_bitserial.cu. Host code; no CUDA headers.
#pragma once

namespace lowbit::gemv {

// The GEMV kernel for (bits 1 or 2, slots 8/4/2/1) and the activation-plane kernel for bits;
// null when not instantiated.
const void* bitserial_gemv_kernel(int bits, int slots);
const void* bitserial_xplanes_kernel(int bits);

}  // namespace lowbit::gemv
