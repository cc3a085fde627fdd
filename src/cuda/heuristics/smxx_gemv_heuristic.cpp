// The GEMV family's launch choice (smxx_gemv_heuristic.hpp). Measurements behind each rule:
// docs/kernels/gemv.md, "Notes".
#include "cuda/heuristics/smxx_gemv_heuristic.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "cuda/gemv/smxx_gemv_layout.hpp"

namespace lowbit::gemv {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

GemvLaunch choose_gemv_launch(const GemvShape& s, const cuda::GpuSpec& gpu) {
  GemvLaunch l;
  const int64_t chunks = ceil_div(s.k, kChunkK);

  // Eight warps split k (at most one warp per chunk), two blocks per SM: 16 warps, the
  // register file at 128 registers. Measured on H200 (docs/kernels/gemv.md, v6 notes):
  // one block of 8 warps per SM (room for the next call's block under PDL) was 13-25%
  // slower, one block of 16 warps 2-20% slower (w8 excepted: -1%).
  int warps = static_cast<int>(std::min<int64_t>(8, chunks));
  int bps = 2, force_table = -1;
  if (const char* env = std::getenv("LOWBIT_GEMV_LAUNCH")) {
    int w = -1, b = -1, c = -1;
    if (std::sscanf(env, "%d,%d,%d", &w, &b, &c) >= 1) {
      if (w >= 1 && w <= kMaxWarps) warps = static_cast<int>(std::min<int64_t>(w, chunks));
      if (b >= 1 && b <= 4) bps = b;
      force_table = c;
    }
  }
  l.warps = warps;
  l.blocks_per_sm = bps;
  l.depth = ring_depth(s.bits);
  l.slot_bytes = ring_slot_bytes(s.bits, s.slots, s.zeros);

  // Shared memory: [rings][correction tables][partial sums][activation buffers (tiled
  // layout: m x 512 bytes per warp)]; 16-byte multiples.
  const std::size_t ring_bytes = static_cast<std::size_t>(warps) * l.depth * l.slot_bytes;
  const int64_t s_max = ceil_div(chunks, warps);
  const std::size_t stride = static_cast<std::size_t>(s_max) * s.slots * 4 * kCorrEntryBytes;
  const std::size_t part_bytes = static_cast<std::size_t>(2) * warps * s.m * kTileRows * sizeof(float);
  const std::size_t x_bytes =
      gemv_stages_x(s.layout, s.m) ? static_cast<std::size_t>(warps) * s.m * kSliceBytes : 0;
  // The tables when two blocks still fit an SM beside them (else corrections per item).
  const std::size_t half_sm = static_cast<std::size_t>(std::max(gpu.smem_per_sm, 96 * 1024)) / 2 - 1024;
  l.corr_table = ring_bytes + warps * stride + part_bytes + x_bytes <= half_sm;
  if (force_table >= 0) l.corr_table = force_table != 0;
  l.corr_stride = l.corr_table ? static_cast<int>(stride) : 0;
  l.corr_offset = static_cast<int>(ring_bytes);
  l.part_offset = static_cast<int>(ring_bytes + static_cast<std::size_t>(warps) * l.corr_stride);
  l.xbuf_offset = static_cast<int>(static_cast<std::size_t>(l.part_offset) + part_bytes);
  l.smem_bytes = static_cast<std::size_t>(l.xbuf_offset) + x_bytes;
  return l;
}

void finish_gemv_launch(GemvLaunch& l, int64_t tiles, int blocks_per_sm, const cuda::GpuSpec& gpu) {
  const int64_t slots = static_cast<int64_t>(std::clamp(blocks_per_sm, 1, l.blocks_per_sm)) * std::max(1, gpu.sm_count);
  l.grid = static_cast<int>(std::max<int64_t>(1, std::min(tiles, slots)));
  if (const char* env = std::getenv("LOWBIT_GEMV_GRID")) {
    const int g = std::atoi(env);
    if (g >= 1) l.grid = static_cast<int>(std::min<int64_t>(g, tiles));
  }
}

}  // namespace lowbit::gemv
