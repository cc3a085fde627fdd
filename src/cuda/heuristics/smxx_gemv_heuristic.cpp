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

// Bytes of one staged activation row: chunks * 256 elements, padded by 64 bytes (f16/bf16:
// two 16-byte B loads of a quarter warp on distinct bank halves) or 32 bytes (int8: four
// 8-byte loads of a quarter warp on distinct 32-byte bank groups).
int staged_row_bytes(int act, int64_t chunks) {
  const int esize = act == kActI8 ? 1 : 2;
  return static_cast<int>(chunks * kChunkK * esize + (act == kActI8 ? 32 : 64));
}

}  // namespace

GemvLaunch choose_gemv_launch(const GemvShape& s, const cuda::GpuSpec& gpu) {
  GemvLaunch l;
  const int64_t chunks = ceil_div(s.k, kChunkK);
  const int64_t tiles = ceil_div(s.n, kTileRows);

  // Warps split the chunks in equal contiguous ranges; no warp is left without a chunk.
  // Eight warps measured best for Suite 1 (docs/kernels/gemv.md, notes v2).
  int warps = static_cast<int>(std::min<int64_t>(kMaxWarps, chunks));
  int cpw = static_cast<int>(ceil_div(chunks, warps));
  // Tiles per unit: the width's maximum (v2: fewer tiles per unit was slower even for the
  // small layers of Suite 1).
  int tpu = max_tiles_per_unit(s.bits);
  int force_smem = -1, force_stages = -1;

  if (const char* env = std::getenv("LOWBIT_GEMV_LAUNCH")) {
    int w = 0, t = 0, x = -1, st = -1;
    if (std::sscanf(env, "%d,%d,%d,%d", &w, &t, &x, &st) >= 2 && w >= 1 && w <= kMaxWarps && t >= 1 &&
        t <= max_tiles_per_unit(s.bits)) {
      warps = static_cast<int>(std::min<int64_t>(w, chunks));
      cpw = static_cast<int>(ceil_div(chunks, warps));
      tpu = t;
      force_smem = x;
      force_stages = st;
    }
  }
  warps = static_cast<int>(ceil_div(chunks, cpw));

  l.warps = warps;
  l.chunks_per_warp = cpw;
  l.tiles_per_unit = tpu;
  l.units = static_cast<int>(ceil_div(tiles, tpu));

  const std::size_t slot = static_cast<std::size_t>(ring_slot_bytes(s.bits, s.slots));
  int stages = std::clamp(1 + static_cast<int>((kGemvRingTarget + slot - 1) / slot), kGemvMinStages, kGemvMaxStages);
  const std::size_t row_bytes = static_cast<std::size_t>(staged_row_bytes(s.act, chunks));
  const std::size_t x_bytes = (row_bytes * static_cast<std::size_t>(s.m) + 15) / 16 * 16;
  const std::size_t table_bytes = static_cast<std::size_t>(chunks) * s.slots * 16 * sizeof(float);
  const std::size_t tables = (s.act != kActI8 ? table_bytes : 0) + (s.act == kActI8 || s.zeros ? table_bytes : 0);
  const std::size_t part_bytes =
      2 * static_cast<std::size_t>(warps) * s.m * tpu * kTileRows * sizeof(float);
  const std::size_t per_block = std::min<std::size_t>(
      static_cast<std::size_t>(std::max(gpu.smem_per_block_optin, 48 * 1024)),
      static_cast<std::size_t>(std::max(gpu.smem_per_sm, 96 * 1024)) / 2 - 1024);
  auto ring_bytes = [&](int st) { return static_cast<std::size_t>(warps) * st * slot; };
  // Staged activations when they fit beside the minimum rings (int8: always; can_implement
  // rejects int8 shapes that do not fit).
  l.x_in_smem = s.act == kActI8 || x_bytes + tables + part_bytes + ring_bytes(kGemvMinStages) <= per_block;
  if (force_smem >= 0 && s.act != kActI8) l.x_in_smem = force_smem != 0;
  const std::size_t fixed = (l.x_in_smem ? x_bytes : 0) + tables + part_bytes;
  while (stages > 2 && fixed + ring_bytes(stages) > per_block) --stages;
  if (force_stages >= 2 && force_stages <= kGemvMaxStages) stages = force_stages;
  l.stages = stages;

  // Shared memory: [staged x][correction table][activation-sum table][partial sums][rings];
  // the tables hold 16 floats per (chunk, group).
  l.x_smem_stride = static_cast<int>(row_bytes);
  std::size_t off = l.x_in_smem ? x_bytes : 0;
  l.corr_offset = static_cast<int>(off);
  if (s.act != kActI8) off += table_bytes;
  l.cx_offset = static_cast<int>(off);
  if (s.act == kActI8 || s.zeros) off += table_bytes;
  l.part_offset = static_cast<int>(off);
  off += part_bytes;
  l.ring_offset = static_cast<int>(off);
  l.smem_bytes = off + ring_bytes(stages);
  return l;
}

void finish_gemv_launch(GemvLaunch& l, int blocks_per_sm, const cuda::GpuSpec& gpu) {
  const int64_t slots = static_cast<int64_t>(std::max(1, blocks_per_sm)) * std::max(1, gpu.sm_count);
  const int64_t iters = ceil_div(l.units, slots);  // units per block, at most
  l.grid = static_cast<int>(ceil_div(l.units, iters));
  if (const char* env = std::getenv("LOWBIT_GEMV_GRID")) {
    const int g = std::atoi(env);
    if (g >= 1) l.grid = std::min(g, l.units);
  }
}

}  // namespace lowbit::gemv
