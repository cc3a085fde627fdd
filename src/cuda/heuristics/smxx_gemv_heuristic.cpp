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

// A block's share of the SM's shared memory with `bps` blocks per SM.
std::size_t block_smem_of(const cuda::GpuSpec& gpu, int bps) {
  return static_cast<std::size_t>(std::max(gpu.smem_per_sm, 96 * 1024)) / bps - 1024;
}

// Shared memory of `warps` warps holding their activations once (each warp's share of the
// chunks, s_max of them, m rows): rings, correction tables of `corr_stride` bytes per warp,
// two tiles of partial sums, the staged activations (act-order: and the region below).
// Act-order: the region at place_offset holds the rows as they are (m k 2-byte values) for the
// lanes' gather, or the table of places (k int32) for the block's scatter (smxx_gemv.cuh).
std::size_t place_table_bytes(const GemvShape& s, bool gather) {
  if (!s.act_order) return 0;
  const int64_t bytes = gather ? 2 * static_cast<int64_t>(s.m) * s.k : 4 * s.k;
  return static_cast<std::size_t>((bytes + 15) / 16 * 16);
}
std::size_t x_once_bytes(const GemvShape& s, int64_t s_max, int warps, std::size_t ring_per_warp,
                         std::size_t corr_stride, bool gather) {
  const std::size_t w = static_cast<std::size_t>(warps);
  const std::size_t once = w * static_cast<std::size_t>(s_max) * s.m * kSliceBytes;
  return w * ring_per_warp + w * corr_stride + 2 * w * s.m * kTileRows * sizeof(float) + once + place_table_bytes(s, gather);
}

// The launch for `s`, act-order weights planned with the gather's copy of the rows or the table.
GemvLaunch plan_launch(const GemvShape& s, const cuda::GpuSpec& gpu, bool gather) {
  GemvLaunch l;
  const int64_t chunks = ceil_div(s.k, kChunkK);

  // Eight warps split k (at most one warp per chunk), two blocks per SM: 16 warps, the
  // register file at 128 registers. Measured on H200 (docs/kernels/gemv.md, v6 notes):
  // one block of 8 warps per SM (room for the next call's block under PDL) was 13-25%
  // slower, one block of 16 warps 2-20% slower (w8 excepted: -1%) in v6 (v8 takes it for few
  // tiles per SM, below).
  // Tiled layout with the activations staged (m > kTiledDirectMaxM): one block of 16 warps
  // per SM, so that the block's whole share of shared memory holds the activations staged
  // once (v7, H200 Suite-1 sums with every layer on this family: w4 g128 m = 4 / 8 57.6 /
  // 85.6 us against 62.1 / 88.7 with two blocks of 8, w8 per-channel 71.6 / 89.3 against
  // 78.3 / 116.6; one block of 8 warps: 60.9 / 77.5 and 77.9 / 93.7).
  // Few tiles per SM (at most kGemvFewTilesPerSm: Suite 1's qkv, o and down, not gate_up):
  // one block of 16 warps per SM as well. Each warp then owns half as many chunks of a tile,
  // so the prologue after griddepcontrol.wait (activations staged, correction tables) is half
  // as long, and an SM's tiles are not split between two blocks that finish apart (v8, H200,
  // same run, m = 1, 8 x 2 against 16 x 1 warps: W8 per-channel qkv / o 8.61 / 7.44 against
  // 7.54 / 6.60 us, W4 g128 f16 7.53 / 6.09 against 6.93 / 5.65, w1 g128 qkv / o / down 6.07 /
  // 4.71 / 12.02 against 5.42 / 4.56 / 10.44; but gate_up, 13.6 tiles per SM: W4 17.65 against
  // 18.49, w1 14.95 against 16.05).
  const int64_t tiles = ceil_div(s.n, kTileRows);
  const bool few_tiles = tiles <= static_cast<int64_t>(kGemvFewTilesPerSm) * std::max(1, gpu.sm_count);
  const bool staged = gemv_stages_x(s.layout, s.m);
  // Act-order weights: one block of 16 warps per SM at every m as well. Each block reads the whole
  // permutation of its warps' chunks and writes a table of k entries after the wait ("Act-order"
  // in docs/kernels/gemv.md), so two blocks per SM do that work twice. Session 67, H200, W4 g128
  // f16 act-order, default (two blocks of 8 warps on o and gate_up) against 16 x 1, us: m = 1 o
  // 6.06 / 5.55, gate_up 18.61 / 18.22; m = 2 gate_up 20.09 / 19.28 (qkv, down: 16 x 1 already).
  const bool one_block = staged || few_tiles || s.act_order;
  int warps = static_cast<int>(std::min<int64_t>(one_block ? 16 : 8, chunks));
  int bps = one_block ? 1 : 2, force_table = -1, ksplit = 1;
  l.depth = ring_depth(s.bits);
  l.slot_bytes = ring_slot_bytes(s.bits, s.slots, s.zeros);
  // Long k with staged activations: fewer warps when that is what lets the block hold its
  // activations once (each warp's chunks staged once per call) instead of per item. A warp
  // then owns more chunks (a larger share of x) but the rings shrink by more. Session 14,
  // H200, down (k = 14336, 56 chunks), W4 g128 f16, 2-slot rings, us, 16 / 12 / 8 warps:
  // m = 4 13.28 (once) / 14.17 / 16.82; m = 5 23.93 (per item) / 14.96 (once) / 17.25;
  // m = 6 27.36 / 28.97 (per item) / 17.69 (once). The largest count that fits wins; not
  // below 8 warps (no measurement there).
  // Session 17: on sm_90, clusters of 2 or 4 blocks splitting k (each block stages 1 / ksplit
  // of the activations; the kernel's phase reduction reads the other blocks' partial sums
  // through distributed shared memory) where one block of 16 warps cannot hold them once,
  // before fewer warps. The smallest cluster that fits, and in it the warp count (8..16, even)
  // whose busiest block has the fewest items per tile (an SM's load: each warp's chunk count
  // summed over the block), ties to more warps, after those whose shared memory holds two tiles
  // per phase (two_phase_tiles below). H200, down (56 chunks), us, m = 5 / 6 / 7 / 8,
  // clusters of 2 with 16 / 14 / 12 / 10 / 8 warps (busiest block 32 / 28 / 32 / 30 / 32
  // items), W4 g128 f16: 14.20 / 14.64 / 16.26 / 19.43; 13.82 / 14.16 / 14.59 / 16.21; 14.80 /
  // 15.29 / 15.55 / 17.55; 15.14 / 15.41 / 15.59 / 16.05; 15.95 / 16.18 / 16.40 / 16.88 (one
  // block: 15.02 (12 warps) / 17.40 (8) / the mixed GEMM 22.60 / 22.63). W8 per-channel f16,
  // m = 3 / 4 / 5, clusters of 2, 16 / 14 / 12 warps: 17.69 / 19.62 / 22.59; 18.28 / 18.64 /
  // 18.93; 18.78 / 19.00 / 19.21 (one block, 12 or 8 warps: 19.47 / 22.58 / 22.92); m = 6 / 7
  // / 8, clusters of 2 as the rule picks them (14 / 10 / 10 warps; 14 at m = 7 holds one tile
  // per phase: 22.66): 19.94 / 19.81 / 20.91, against clusters of 4 with 14 / 12 / 8 warps (14
  // / 20 / 16 items) 22.75 / 23.83 / 24.29; 26.89 / 27.18 / 31.07; 22.55 / 22.85 / 23.14 and
  // the mixed GEMM 27.8-27.9. Clusters of 4 for W4 (14 warps, 30 clusters resident): 20.9-22.8,
  // hence the smallest cluster first.
  const char* ks_env = std::getenv("LOWBIT_GEMV_KSPLIT");
  const int ks_force = ks_env != nullptr ? std::atoi(ks_env) : 0;
  const std::size_t ring_per_warp = static_cast<std::size_t>(l.depth) * l.slot_bytes;
  // Shared memory of one block of w warps (a cluster of ks) holding its activations once,
  // with `phases` tiles of partial sums per phase.
  auto once_bytes = [&](int w, int ks, int phases) {
    const int64_t s_max = ceil_div(chunks, static_cast<int64_t>(w) * ks);
    const std::size_t table = static_cast<std::size_t>(s_max) * s.slots * 4 * kCorrEntryBytes;
    const std::size_t tile_part = static_cast<std::size_t>(w) * s.m * kTileRows * sizeof(float);
    return x_once_bytes(s, s_max, w, ring_per_warp, table, gather) + 2 * (phases - 1) * tile_part;
  };
  auto once_fits = [&](int w, int ks) { return once_bytes(w, ks, 1) <= block_smem_of(gpu, 1); };
  // Act-order weights stage their activations once at every m (the family's condition), so the
  // search runs for them at m <= 2 as well: where one block of 16 warps cannot hold the
  // activations and their copy (e.g. k = 28672 at m = 2 on the H200; Suite 1's down at m = 2
  // with A100-class shared memory), a cluster or fewer warps instead of a mixed GEMM.
  if ((staged || s.act_order) && one_block && std::getenv("LOWBIT_GEMV_XONCE") == nullptr) {
    // Items per tile of the busiest block of a cluster of ks blocks of w warps (the kernel's
    // split: the cluster's warp vw takes chunks vw, vw + w ks, ...).
    auto busiest_block = [&](int w, int ks) {
      const int64_t kst = static_cast<int64_t>(w) * ks;
      int64_t worst = 0;
      for (int b = 0; b < ks; ++b) {
        int64_t items = 0;
        for (int i = 0; i < w; ++i) items += (chunks - 1 - (static_cast<int64_t>(b) * w + i)) / kst + 1;
        worst = std::max(worst, items);
      }
      return worst;
    };
    // Whether the block's share of the SM holds a second tile of partial sums per phase beside
    // the rest: with one tile per phase the cluster meets at a barrier after every tile, which
    // cost 2-3 us per call where it happened (W4 m = 8 with 16 warps, W8 m = 7 with 14: 22.68
    // us against 19.85 at m = 6 and 20.76 at m = 8 with 10 warps), so such candidates come last.
    auto two_phase_tiles = [&](int w, int ks) { return once_bytes(w, ks, 2) <= block_smem_of(gpu, 1); };
    auto try_ksplit = [&](int ks) {
      if (!s.clusters) return false;
      int best = 0;
      bool best_two = false;
      int64_t best_load = 0;
      for (int w = 16; w >= 8; w -= 2) {
        if (static_cast<int64_t>(w) * ks > chunks || !once_fits(w, ks)) continue;
        const bool two = two_phase_tiles(w, ks);
        const int64_t load = busiest_block(w, ks);
        if (best == 0 || (two && !best_two) || (two == best_two && load < best_load)) {
          best = w;
          best_two = two;
          best_load = load;
        }
      }
      if (best == 0) return false;
      warps = best;
      ksplit = ks;
      return true;
    };
    if (!once_fits(warps, 1) && ks_force != 2 && ks_force != 4) {
      bool done = ks_force != 1 && (try_ksplit(2) || try_ksplit(4));
      for (int w : {12, 8})
        if (!done && w < warps && once_fits(w, 1)) {
          warps = w;
          done = true;
        }
    }
  }
  // Tiled layout at m = 1 with 9..16 chunks and at most one tile per block at two blocks per
  // SM (Suite 1's o: 256 tiles, 16 chunks): two blocks of 8 warps per SM instead of one of 16,
  // so each block owns one tile and each warp two of its chunks. Session 31 (docs/kernels/
  // gemv.md v23), H200, same binary, two alternating rounds, o at m = 1, 16 x 1 / 8 x 2 warps,
  // us: W4 g128 f16 5.14, 5.14 / 4.93, 4.93; bf16 5.46, 5.45 / 4.90, 4.90; asym f16 5.38, 5.42 /
  // 5.03, 5.03; asym bf16 5.74, 5.74 / 5.15, 5.15; w8 g128 6.13, 6.13 / 5.94, 5.92; W8
  // per-channel f16 5.76, 5.77 / 5.70, 5.70; bf16 6.46, 6.43 / 6.26, 6.25. Not at m = 2 (W4 g128
  // f16 5.33 / 5.46, w8 g128 6.26 / 6.55), not in the gemv layout (w2 4.44 / 4.80, w5 5.77 /
  // 6.26, int8 activations 4.91 / 5.17), not for more tiles (w8 g128 qkv, 384 tiles: 7.37 /
  // 7.57) or longer k (down, 56 chunks: 16.47 / 17.21).
  if (s.layout == kLayoutTiled && s.m == 1 && !s.act_order && chunks > 8 && chunks <= 16 &&
      tiles <= 2 * static_cast<int64_t>(std::max(1, gpu.sm_count))) {
    warps = 8;
    bps = 2;
  }
  if (const char* env = std::getenv("LOWBIT_GEMV_LAUNCH")) {
    int w = -1, b = -1, c = -1;
    if (std::sscanf(env, "%d,%d,%d", &w, &b, &c) >= 1) {
      if (w >= 1 && w <= kMaxWarps) warps = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(w, chunks / ksplit)));
      if (b >= 1 && b <= 4) bps = b;
      force_table = c;
    }
  }
  // (v11-v15: 8-bit weights at m <= 2 on long k (k >= 2 n, Suite 1's down) ran clusters of 2
  // with 16 warps, each warp half the chunks of a tile: W8 per-channel f16 down at m = 1 / 2
  // 17.16 / 17.39 us against one block of 16 warps 17.69 / 18.02. With the tiles interleaved
  // (v16) one block is faster: H200, same binary, two runs each, clusters of 2 / one block,
  // m = 1: W8 per-channel 16.47 / 15.39, w8 g128 16.44 / 16.08; m = 2: 16.87 / 15.94, 17.06 /
  // 17.14. So that rule is gone: clusters only where one block cannot stage the activations
  // once, above.)
  // Forced (tests, measurements): any one-block launch of the tiled layout whose kernel stages
  // the activations (only those have cluster instantiations: m > 2, or the activations staged
  // once at m <= 2), as long as every warp of the cluster has a chunk.
  if ((ks_force == 2 || ks_force == 4) && s.clusters && s.layout == kLayoutTiled && one_block && bps == 1 &&
      chunks >= ks_force) {
    const int w = static_cast<int>(std::min<int64_t>(warps, chunks / ks_force));
    if (staged || (std::getenv("LOWBIT_GEMV_XONCE") == nullptr && once_fits(w, ks_force))) {
      ksplit = ks_force;
      warps = w;
    }
  }
  l.warps = warps;
  l.blocks_per_sm = bps;
  l.ksplit = ksplit;
  // Which tiles a block owns: b, b + G, ... of the G blocks (the whole grid then streams
  // neighbouring tiles, and neighbouring 32-byte pieces of every scale and zero-point row, at
  // any moment) rather than a contiguous range (each block far from the others). Session 23,
  // H200, same binary, two runs each, Suite-1 sums at m = 1, contiguous / interleaved, us:
  // W4 g128 f16 39.7 / 38.7 (qkv 6.07 / 5.75, o 5.06 / 4.89, gate_up 17.75 / 17.64, down
  // 10.83 / 10.43), asym 42.2 / 41.0, bf16 41.6 / 41.0, w8 g128 60.3 / 59.65, w8 per-channel
  // 58.6 / 58.4, w2 35.9 / 35.45, w3 40.4 / 39.65, w5 48.0 / 47.5, w6 53.6 / 53.25; at m = 8
  // equal or faster (w8 per-channel 67.45 / 66.05). The clusters splitting k keep the
  // contiguous ranges: there it was equal or slower (w8 g128 down at m = 1 16.41 / 16.59).
  l.tile_interleave = ksplit == 1;
  if (const char* env = std::getenv("LOWBIT_GEMV_INTERLEAVE")) l.tile_interleave = std::atoi(env) != 0;
  // Tiled layout, grouped 4-bit weights: each block prefetches its contiguous 1 / grid share of
  // the (groups, n) scale rows (and zero-point rows) into L2 right after the wait, once the
  // activations and the rest of its ring are requested, so that the items' 32-byte scale
  // pieces, scattered over the rows, hit L2. Session 29 (docs/kernels/gemv.md v20), H100, same
  // binary, alternating rounds, Suite-1 sums, off / on, us: W4 g128 f16 m = 1 / 2 / 4 / 8 46.4 /
  // 47.6 / 51.1 / 56.3 against 45.9 / 47.1 / 50.8 / 56.4 (m = 8: qkv and o lose 0.15 us, gate_up
  // gains 0.2), asym 47.3 / 48.6 / 52.9 / 57.5 against 46.8 / 48.2 / 52.5 / 58.0, bf16 47.1 /
  // 48.7 / 52.4 / 57.6 against 46.7 / 48.1 / 52.2 / 57.7; w8 g128 f16 at m = 1 77.9 / 78.0 (gate_up
  // 40.09 / 40.33). Hence 4-bit weights at m <= 4 only. (Session 23, v16 (e): the same prefetch
  // before the wait was slower.) Session 30 (v21), H200, same binary, three alternating rounds,
  // medians, m = 1 / 2 / 4, off / on: W4 g128 f16 38.8 / 40.4 / 43.9 against 39.0 / 40.4 /
  // 44.1, bf16 40.6 / 42.3 / 46.2 against 41.3 / 42.5 / 46.5, asym f16 40.1 / 41.8 / 46.8
  // against 40.9 / 42.4 / 47.1, asym bf16 42.9 / 44.4 / 49.3 against 44.1 / 45.3 / 49.8: on the
  // H200 slower or equal at every m. So only on GPUs whose theoretical DRAM rate is H100's
  // (3352 GB/s) or lower, not the H200's (4814). Why the faster memory loses is not known.
  const bool grouped_tiled = s.layout == kLayoutTiled && s.slots > 1;
  l.scale_prefetch = grouped_tiled && s.bits == 4 && s.m <= 4 && gpu.dram_gbps < kGemvScalePrefetchMaxDramGbps;
  if (const char* env = std::getenv("LOWBIT_GEMV_SCALE_PREFETCH")) l.scale_prefetch = grouped_tiled && std::atoi(env) != 0;

  // Shared memory: [rings][correction tables][partial sums][activation buffers (tiled
  // layout: m x 512 bytes per warp)]; 16-byte multiples.
  const std::size_t ring_bytes = static_cast<std::size_t>(warps) * l.depth * l.slot_bytes;
  const int64_t s_max = ceil_div(chunks, static_cast<int64_t>(warps) * ksplit);
  const std::size_t stride = static_cast<std::size_t>(s_max) * s.slots * 4 * kCorrEntryBytes;
  // Partial sums: two buffers of one phase (phase_tiles tiles) each.
  const std::size_t tile_part_bytes = static_cast<std::size_t>(warps) * s.m * kTileRows * sizeof(float);
  std::size_t part_bytes = 2 * tile_part_bytes;
  std::size_t x_bytes = staged ? static_cast<std::size_t>(warps) * s.m * kSliceBytes : 0;
  // The tables when the launch's blocks per SM still fit beside them (else corrections per
  // item): a block's share of the SM's shared memory.
  const std::size_t block_smem = block_smem_of(gpu, bps);
  l.corr_table = ring_bytes + warps * stride + part_bytes + x_bytes <= block_smem;
  if (force_table >= 0) l.corr_table = force_table != 0;
  l.corr_stride = l.corr_table ? static_cast<int>(stride) : 0;
  // Tiled layout: the warp's chunks of activations staged once per call when they fit beside
  // the rest (in the block's share of the SM), at every m: the items then read B with ldmatrix alone
  // (docs/kernels/gemv.md v7). Else direct loads (m <= kTiledDirectMaxM) or per-item staging.
  // LOWBIT_GEMV_XONCE=0 turns it off (measurements).
  std::size_t table_bytes = 0;  // act-order: the table of places (with x_mode kGemvXOnce)
  l.x_mode = staged ? kGemvXPerItem : kGemvXDirect;
  l.xbuf_stride = s.m * kSliceBytes;
  if (s.layout == kLayoutTiled) {
    const char* env = std::getenv("LOWBIT_GEMV_XONCE");
    if ((env == nullptr || std::atoi(env) != 0) &&
        x_once_bytes(s, s_max, warps, static_cast<std::size_t>(l.depth) * l.slot_bytes, l.corr_stride, gather) <= block_smem) {
      l.x_mode = kGemvXOnce;
      l.xbuf_stride = static_cast<int>(s_max * s.m * kSliceBytes);
      x_bytes = static_cast<std::size_t>(warps) * s_max * s.m * kSliceBytes;
      table_bytes = place_table_bytes(s, gather);
    }
  }
  // Tiles per phase: the block meets at one barrier per phase instead of one per tile, so its
  // warps drift apart by up to a phase (docs/kernels/gemv.md v7). Up to kGemvPhaseTiles, as
  // long as the block's share of the SM still holds it with the choices above
  // (LOWBIT_GEMV_PHASE overrides).
  int phase = kGemvPhaseTiles;
  if (const char* env = std::getenv("LOWBIT_GEMV_PHASE")) {
    const int v = std::atoi(env);
    if (v >= 1 && v <= 64) phase = v;
  }
  const std::size_t fixed = ring_bytes + static_cast<std::size_t>(warps) * l.corr_stride + x_bytes + table_bytes;
  while (phase > 1 && fixed + 2 * phase * tile_part_bytes > block_smem) --phase;
  l.phase_tiles = phase;
  part_bytes = 2 * static_cast<std::size_t>(phase) * tile_part_bytes;
  l.corr_offset = static_cast<int>(ring_bytes);
  l.part_offset = static_cast<int>(ring_bytes + static_cast<std::size_t>(warps) * l.corr_stride);
  l.xbuf_offset = static_cast<int>(static_cast<std::size_t>(l.part_offset) + part_bytes);
  l.smem_bytes = static_cast<std::size_t>(l.xbuf_offset) + x_bytes;
  // Act-order: the block's table of places after the activation buffers (only with the
  // activations staged once: the kernel places them there; else the family refuses).
  if (table_bytes > 0) {
    l.place_offset = static_cast<int>(l.smem_bytes);
    l.smem_bytes += table_bytes;
    l.act_gather = gather ? 1 : 0;
  }
  return l;
}

}  // namespace

// Act-order weights: the lanes' gather from the block's copy of the rows, or the block's scatter
// through the table of places (smxx_gemv.cuh). The copy needs 2 m k bytes of shared memory, the
// table 4 k. Session 68 (docs/kernels/gemv.md, "Act-order"), H200, W4 g128 f16 act-order, the
// same binary, two rounds, the copy / the scatter (LOWBIT_GEMV_ACT_GATHER=1 / 0), us: m = 1 qkv
// / o / gate_up / down 6.18 / 5.35 / 17.33 / 10.81 against 6.36 / 5.50 / 18.15 / 12.95; m = 2 6.48
// / 5.61 / 17.90 / 13.17 against 6.98 / 6.07 / 19.07 / 16.35; m = 4 7.15 / 6.24 / 18.60 against 8.35
// / 7.35 / 20.45 with the same launch, but down 19.76 against 18.60 where the copy left room for 8
// warps instead of 14 (clusters of 2); m = 8 qkv / o 10.18 / 8.76 against 11.44 / 10.37, gate_up
// 24.59 against 24.04 where the copy cut the tiles per phase from 4 to 1. So the gather at m <= 2
// (its copy is no larger than the table there), and above wherever its launch is the table's in
// every other respect (warps, blocks, cluster, staging, tiles per phase).
// LOWBIT_GEMV_ACT_GATHER=0 / 1 forces one (measurements; where the forced one leaves no launch that
// stages the activations once, the family refuses act-order).
//
// Where the copy changes the launch, 4-bit weights take the gather in rounds of
// kActGatherRoundRows rows through the table's region (the table's launch, act_rounds = 1: the
// kRounds kernels), 8-bit weights the scatter. Session 69, call 4 (docs/kernels/gemv.md,
// "Act-order"), H200, the same binary, W4 g128 f16 act-order, us, rounds / scatter: m = 7 qkv / o /
// gate_up 10.25 / 9.10 / 22.52 against 10.67 / 9.65 / 22.77, m = 8 10.57 / 9.43 / 23.15 against
// 11.38 / 10.36 / 23.87, down at m = 4 / 5 (clusters of 2) 16.55 / 17.84 against 18.55 / 20.38. With
// 8-bit weights the rounds lost 0.1-0.5 us per layer at m = 4..7 (session 68, call 3, as a run-time
// path). LOWBIT_GEMV_ACT_GATHER=2 forces the rounds (4-bit, m > kActGatherRoundRows, where the
// table's launch stages the activations once).
GemvLaunch choose_gemv_launch(const GemvShape& s, const cuda::GpuSpec& gpu) {
  if (!s.act_order) return plan_launch(s, gpu, false);
  auto rounds_of = [&](GemvLaunch t) {
    if (s.bits == 4 && s.m > kActGatherRoundRows && t.x_mode == kGemvXOnce) {
      t.act_gather = 1;
      t.act_rounds = 1;
    }
    return t;
  };
  if (const char* env = std::getenv("LOWBIT_GEMV_ACT_GATHER")) {
    const int v = std::atoi(env);
    return v == 2 ? rounds_of(plan_launch(s, gpu, false)) : plan_launch(s, gpu, v != 0);
  }
  if (s.m <= kActGatherMaxM) return plan_launch(s, gpu, true);
  const GemvLaunch t = plan_launch(s, gpu, false), g = plan_launch(s, gpu, true);
  const bool same = g.x_mode == t.x_mode && g.warps == t.warps && g.blocks_per_sm == t.blocks_per_sm &&
                    g.ksplit == t.ksplit && g.phase_tiles == t.phase_tiles && g.corr_table == t.corr_table;
  return same ? g : rounds_of(t);
}

namespace {

// min(tiles, SMs x blocks per SM) blocks, or LOWBIT_GEMV_GRID (a test and measurement knob),
// at most one per tile. Both kernels of the family size their grids so.
int grid_of(int64_t tiles, int blocks_per_sm, const cuda::GpuSpec& gpu) {
  const int64_t slots = static_cast<int64_t>(std::max(1, blocks_per_sm)) * std::max(1, gpu.sm_count);
  int grid = static_cast<int>(std::max<int64_t>(1, std::min(tiles, slots)));
  if (const char* env = std::getenv("LOWBIT_GEMV_GRID")) {
    const int g = std::atoi(env);
    if (g >= 1) grid = static_cast<int>(std::min<int64_t>(g, tiles));
  }
  return grid;
}

}  // namespace

void finish_gemv_launch(GemvLaunch& l, int64_t tiles, int blocks_per_sm, const cuda::GpuSpec& gpu,
                        int max_clusters) {
  if (l.ksplit <= 1) {
    l.grid = grid_of(tiles, std::clamp(blocks_per_sm, 1, l.blocks_per_sm), gpu);
    return;
  }
  // Clusters: one per balanced tile range, as many as are resident at once.
  int clusters = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(tiles, std::max(1, max_clusters))));
  if (const char* env = std::getenv("LOWBIT_GEMV_GRID")) {
    const int g = std::atoi(env) / l.ksplit;
    if (g >= 1) clusters = static_cast<int>(std::min<int64_t>(g, tiles));
  }
  l.grid = clusters * l.ksplit;
}

bool gemv_bitserial_applies(const GemvShape& s) {
  return s.layout == kLayoutGemv && (s.bits == 1 || s.bits == 2) && (s.act == kActF16 || s.act == kActBf16) &&
         s.m == 1;
}

bool gemv_bitserial_chosen(const GemvShape& s) {
  if (!gemv_bitserial_applies(s)) return false;
  if (const char* env = std::getenv("LOWBIT_GEMV_BITSERIAL")) {
    if (env[0] == '0') return false;
    if (env[0] == '1') return true;
  }
  // Measured: 1-bit weights with groups of 128 (Suite 1) at m = 1. Other groups and 2-bit
  // weights keep the decoding kernel (docs/kernels/gemv.md, "Bit-serial").
  return s.bits == 1 && s.slots == 2;
}

int bitserial_warps(const GemvShape& s, const cuda::GpuSpec& gpu) {
  // 8 warps (three blocks per SM at 80 registers) unless the tiles would not fill one wave of
  // those: then one block of 16 warps per SM, so a block holds several tiles and reads each
  // chunk's activation planes from L1 after the first. H200, w1 g128 f16 m = 1, us, 8 / 16
  // warps: qkv (384 tiles) 5.27 / 4.38, o (256) 4.06 / 3.86, down (256) 8.20 / 8.18, gate_up
  // (1792) 11.52 / 14.58.
  const int64_t tiles = ceil_div(s.n, kTileRows);
  int warps = tiles < 3 * static_cast<int64_t>(std::max(1, gpu.sm_count)) ? 16 : 8;
  if (const char* env = std::getenv("LOWBIT_GEMV_BS_WARPS")) {
    const int w = std::atoi(env);
    if (w >= 1 && w <= kBsMaxWarps) warps = w;
  }
  const int64_t chunks = ceil_div(s.k, kChunkK);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(warps, chunks)));
}

BitserialLaunch finish_bitserial_launch(const GemvShape& s, int warps, int blocks_per_sm, const cuda::GpuSpec& gpu) {
  BitserialLaunch l;
  l.warps = warps;
  l.grid = grid_of(ceil_div(s.n, kTileRows), blocks_per_sm, gpu);
  // Interleaved tiles as in choose_gemv_launch (H200, w1 g128 f16 m = 1, contiguous /
  // interleaved, two runs each: 28.40 / 28.15 us, gate_up 11.77 / 11.65).
  if (const char* env = std::getenv("LOWBIT_GEMV_INTERLEAVE")) l.tile_interleave = std::atoi(env) != 0;
  return l;
}

}  // namespace lowbit::gemv
