// lowbit bench: random operands made on the device (fill.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "lowbit/dtype.hpp"

namespace lowbit::bench::cuda {

// Fills `count` elements of dtype `t` at `out` (device memory) with values uniform in
// [lo, hi), rounded to `t`: f16 / bf16 round to nearest even, e4m3 / e5m2 round to nearest
// even and saturate, i8 rounds and clamps to [-127, 127]; f32 as is. Element i depends only on
// (seed, i): the same hash as the host's bench::hash64 (splitmix64). Enqueued on `stream`;
// returns the launch's error.
cudaError_t fill_random(void* out, DType t, int64_t count, uint64_t seed, float lo, float hi,
                        cudaStream_t stream);

}  // namespace lowbit::bench::cuda
