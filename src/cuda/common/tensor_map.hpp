// Internal: 2-D TMA tensor maps (cuTensorMapEncodeTiled) for the Hopper families, reached
// through the runtime's driver entry point so that lowbit does not link libcuda.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "lowbit/status.hpp"

namespace lowbit::cuda {

// True when the driver provides cuTensorMapEncodeTiled (checked once per process).
bool tensor_map_available();

// A 2-D row-major tensor (rows, cols) of `type` elements, rows `row_bytes` apart, read in
// boxes of (box_rows, box_cols). `who` and `what` name the caller and the operand in the
// error message.
Status encode_tensor_map_2d(CUtensorMap* map, CUtensorMapDataType type, const void* base, uint64_t rows,
                            uint64_t cols, uint64_t row_bytes, uint32_t box_rows, uint32_t box_cols,
                            CUtensorMapSwizzle swizzle, const char* who, const char* what);

}  // namespace lowbit::cuda
