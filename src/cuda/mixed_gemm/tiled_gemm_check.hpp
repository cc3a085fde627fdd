// Internal: the contract both mixed GEMM families (sm80_mixed_gemm, sm90_mixed_gemm) share:
// integer weights the tiled layout holds, f16/bf16 activations, output and scales in the
// activation dtype, N a multiple of 64, M <= 2^24. Each family adds its own rules.
#pragma once

#include "lowbit/gemm.hpp"
#include "lowbit/status.hpp"

namespace lowbit::cuda {

// Ok, or the first rule `d` breaks, prefixed with `who` and followed by d.describe().
Status tiled_gemm_check(const GemmDesc& d, const char* who);

}  // namespace lowbit::cuda
