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
  const int sms = std::max(1, gpu.sm_count);

  // One block per SM: each owns a balanced range of whole tiles (qkv: 384 tiles / 132 SMs
  // -> 2 or 3 per block, 97% balance), and its shared memory is the whole SM's. Two blocks
  // of an SM never balance better (2 ceil(t / 2) >= ceil(t)); the override exists to
  // measure a second block of the next call resident beside this one (PDL).
  int cps = 1;
  // Sixteen warps: 4 per scheduler hide the mma / shared-memory latencies of a warp's item
  // (notes v5); fewer when the block has fewer items than warps.
  const int64_t items_per_block = ceil_div(tiles, static_cast<int64_t>(sms) * cps) * chunks;
  int warps = static_cast<int>(std::clamp<int64_t>(items_per_block, 1, kMaxWarps));
  int force_ring = -1, force_smem = -1, force_bulk = -1, force_pf = -1;
  if (const char* env = std::getenv("LOWBIT_GEMV_LAUNCH")) {
    int w = -1, r = -1, x = -1, c = -1, b = -1, pf = -1;
    if (std::sscanf(env, "%d,%d,%d,%d,%d,%d", &w, &r, &x, &c, &b, &pf) >= 1) {
      if (w >= 1 && w <= kMaxWarps) warps = w;
      if (r >= 1 && r <= kMaxRing) force_ring = r;
      force_smem = x;
      if (c >= 1 && c <= 4) cps = c;
      force_bulk = b;
      force_pf = pf;
    }
  }
  l.warps = warps;
  l.ctas_per_sm = cps;
  l.bulk = gpu.cc >= 90;
  if (force_bulk >= 0) l.bulk = force_bulk != 0 && gpu.cc >= 90;
  l.l2_prefetch = force_pf >= 0 ? force_pf * 1024 : kGemvL2Prefetch;

  // Ring depth: the SM's share of kGemvInFlightPerSm in flight, i.e. ring - 1 items per warp.
  const int slot = ring_slot_bytes(s.bits, s.slots, s.zeros);
  l.slot_bytes = slot;
  const int64_t per_warp = ceil_div(kGemvInFlightPerSm, static_cast<int64_t>(cps) * warps * item_weight_bytes(s.bits));
  int ring = static_cast<int>(std::clamp<int64_t>(1 + per_warp, 2, kMaxRing));
  if (force_ring >= 1) ring = force_ring;

  const std::size_t row_bytes = static_cast<std::size_t>(staged_row_bytes(s.act, chunks));
  const std::size_t x_bytes = (row_bytes * static_cast<std::size_t>(s.m) + 15) / 16 * 16;
  const std::size_t table_bytes = static_cast<std::size_t>(chunks) * s.slots * 16 * sizeof(float);
  const std::size_t tables = (s.act != kActI8 ? table_bytes : 0) + (s.act == kActI8 || s.zeros ? table_bytes : 0);
  const std::size_t part_bytes = static_cast<std::size_t>(kRedBufs) * warps * s.m * kTileRows * sizeof(float);
  auto bar_bytes = [&](int r) { return (static_cast<std::size_t>(warps) * r + 2 * kRedBufs) * 8; };
  auto ring_bytes = [&](int r) { return static_cast<std::size_t>(warps) * r * static_cast<std::size_t>(slot); };
  const std::size_t per_block = std::min<std::size_t>(
      static_cast<std::size_t>(std::max(gpu.smem_per_block_optin, 48 * 1024)),
      static_cast<std::size_t>(std::max(gpu.smem_per_sm, 96 * 1024)) / cps - 1024);
  auto total = [&](bool xs, int r) {
    return (xs ? x_bytes : 0) + tables + part_bytes + bar_bytes(r) + ring_bytes(r);
  };
  // Staged activations when they fit beside two-slot rings (int8: always).
  l.x_in_smem = s.act == kActI8 || total(true, 2) <= per_block;
  if (force_smem >= 0 && s.act != kActI8) l.x_in_smem = force_smem != 0;
  if (force_ring < 1)
    while (ring > 1 && total(l.x_in_smem, ring) > per_block) --ring;
  l.ring = ring;

  // Shared memory: [staged x][correction table][activation-sum table][partial sums]
  // [mbarriers][rings]; every piece a multiple of 16 bytes.
  l.x_smem_stride = static_cast<int>(row_bytes);
  std::size_t off = l.x_in_smem ? x_bytes : 0;
  l.corr_offset = static_cast<int>(off);
  if (s.act != kActI8) off += table_bytes;
  l.cx_offset = static_cast<int>(off);
  if (s.act == kActI8 || s.zeros) off += table_bytes;
  l.part_offset = static_cast<int>(off);
  off += part_bytes;
  l.bar_offset = static_cast<int>(off);
  off += (bar_bytes(ring) + 15) / 16 * 16;
  l.ring_offset = static_cast<int>(off);
  l.smem_bytes = off + ring_bytes(ring);
  return l;
}

void finish_gemv_launch(GemvLaunch& l, int64_t tiles, int blocks_per_sm, const cuda::GpuSpec& gpu) {
  const int64_t slots = static_cast<int64_t>(std::clamp(blocks_per_sm, 1, l.ctas_per_sm)) * std::max(1, gpu.sm_count);
  l.grid = static_cast<int>(std::max<int64_t>(1, std::min(tiles, slots)));
  if (const char* env = std::getenv("LOWBIT_GEMV_GRID")) {
    const int g = std::atoi(env);
    if (g >= 1) l.grid = static_cast<int>(std::min<int64_t>(g, tiles));
  }
}

}  // namespace lowbit::gemv
