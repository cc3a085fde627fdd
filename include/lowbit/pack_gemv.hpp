// lowbit: the host packer of the "gemv" layout, read by the low-bit GEMV family
// ("smxx_gemv"). Gemm::pack() calls it when that family is chosen; it is public so that
// tools can pack offline and tests can check the layout in CPU-only builds.
//
// The layout (docs/kernels/gemv.md, "Layout"): 1, 2, 3, 4, 5, 6 or 8-bit codes of W (n, k)
// in (16-row tile, 256-column chunk) blocks of bits * 512 bytes, each lane's share of a
// block being bits * 16 bytes that a warp fetches as bits coalesced 512-byte loads; any n
// and any k (a multiple of 32) by zero padding. Scales and zero points (symmetric, integer
// or float) in the scale dtype (f16 or bf16), paired by rows (g, g+8) of each tile. The
// same packed weight serves f16, bf16 and (4- and 8-bit) int8 activations and every m.
#pragma once

#include <cstdint>
#include <string>

#include "lowbit/formats.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/status.hpp"

namespace lowbit {

// "gemv_w<bits>_v1".
std::string gemv_layout_name(int bits);

// Ok when the gemv layout holds this format and shape: bits 1..6 or 8, any zero-point mode,
// group 32 / 64 / 128 or per-channel, f16 or bf16 scales, no act-order, n >= 1 and k a
// positive multiple of 32. Otherwise the reason, naming the operand.
Status gemv_layout_supports(const IntWeightFormat& f, int64_t n, int64_t k);

// Sizes of the packed buffers.
struct GemvLayoutGeometry {
  int64_t tiles = 0;   // ceil(n / 16)
  int64_t chunks = 0;  // ceil(k / 256)
  int slots = 0;       // scale slots per (tile, chunk): 256 / group, or 1 per-channel
  std::size_t data_bytes = 0;
  std::size_t scale_bytes = 0;  // also the zero-point bytes when zero points are stored
};
GemvLayoutGeometry gemv_layout_geometry(const IntWeightFormat& f, int64_t n, int64_t k);

// Canonical -> gemv layout. Throws lowbit::Error when gemv_layout_supports() fails or the
// weight does not validate. Buffers: data (codes), scales, zeros (integer zero points as
// exact values of the scale dtype, or the float zero points; empty when symmetric).
PackedWeight pack_gemv(const IntWeight& w);

// Gemv layout -> canonical (the exact inverse of pack_gemv; tests and tools).
IntWeight unpack_gemv(const PackedWeight& p);

}  // namespace lowbit
