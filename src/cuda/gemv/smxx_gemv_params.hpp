// Internal: the arguments of the GEMV kernels (smxx_gemv.cuh), one struct passed by value
// as a __grid_constant__ parameter, and the compile-time sizes both sides agree on. Host
// and device; no CUDA headers needed.
#pragma once

#include <cstdint>

namespace lowbit::gemv {

inline constexpr int kMaxWarps = 16;  // warps per block: the block's k-split (see the kernel)
inline constexpr int kMaxThreads = 32 * kMaxWarps;
// Blocks of kMaxThreads the register budget is sized for (__launch_bounds__): 1, i.e. up
// to 128 registers per thread, 16 warps per SM (as one block of 16 warps or two of 8). 80
// registers (three blocks of 8 warps: room for a block of the next call beside two of this
// one) spilled or serialized the B loads and was 10-30% slower on H200
// (docs/kernels/gemv.md, v6 notes).
inline constexpr int kMinBlocks = 1;

// Bytes of one item (one 16-row tile x one 256-column chunk) of weights, and of its scale
// (zero) entries: slots x 8 entries x 4 bytes (per-channel: the tile's 32 bytes).
constexpr int item_weight_bytes(int bits) { return bits * 512; }
constexpr int item_scale_bytes(int slots) { return slots * 32; }
// One slot of a warp's ring: an item's weights, then its scale entries, then its zero
// entries (when stored).
constexpr int ring_slot_bytes(int bits, int slots, bool zeros) {
  return item_weight_bytes(bits) + (zeros ? 2 : 1) * item_scale_bytes(slots);
}
// Ring depth (items a warp has requested ahead), compile-time per width because
// cp.async.wait_group takes an immediate. Two slots from 2 bits up (1 KB to 4 KB of weights
// per warp in flight, 16 to 64 KB per SM; Little: 4.3 TB/s x ~1.5 us under load / 132 SMs =
// ~48 KB per SM), eight for 1-bit items (512 bytes each). Until session 14 the ring held about
// 8 KB per warp (6 / 5 / 4 / 3 / 3 slots for 2 / 3 / 4 / 5 / 6 bits); a run-time depth
// measured the smaller rings faster (H200, Suite-1 sums, us, depth 2 against the old depth,
// m = 1 / m = 8, every layer on the GEMV): w2 38.30 / 47.83 against 38.69 / 49.82, w3 42.00 /
// 50.86 against 43.23 / 57.81, w4 g128 bf16 45.86 / 60.30 against 47.21 / 64.11, w5 47.83 /
// 57.46 against 48.57 / 66.18, w6 52.72 / 64.28 against 53.30 / 70.93; the shared memory
// freed holds more tiles per phase and the activations staged once at larger m. 1-bit: 37.69
// / 46.79 with 2 slots, 36.33 / 44.47 with 8.
constexpr int ring_depth(int bits) { return bits == 1 ? 8 : 2; }
// Bytes of one correction-table entry (chunk, group, t): float4 cg and float4 cx.
inline constexpr int kCorrEntryBytes = 32;
// Act-order weights (kPermuted kernels): up to this m the block always copies the activation
// rows as they are into shared memory and each lane gathers its units' values from there by perm
// (the region at place_offset holds m k 2-byte values; GemvParams::act_gather); above it only
// where that copy leaves the launch as it is, else the block scatters them through a table of the
// packed columns' places (k int32). choose_gemv_launch(); docs/kernels/gemv.md, "Act-order".
inline constexpr int kActGatherMaxM = 2;
// Act-order, 4-bit weights, where the copy of every row would change the launch: the lanes'
// gather in rounds of this many rows (the kernels of act_order = 2 rows, kRounds), in the table's
// region of 4 k bytes (GemvLaunch::act_rounds). docs/kernels/gemv.md, "Act-order".
inline constexpr int kActGatherRoundRows = 2;

// Activation kinds of the kernel instantiations (template argument kAct).
enum GemvAct : int {
  kActF16 = 0,
  kActBf16 = 1,
  kActI8 = 2,  // int8 per-token symmetric, mma.m16n8k32 u8 x s8
};

// Packed layouts a kernel reads (template argument kLayout).
enum GemvLayout : int {
  kLayoutGemv = 0,   // gemv_w<bits>_v1 (smxx_gemv_layout.hpp)
  kLayoutTiled = 1,  // tiled_w4_v1 / tiled_w8_v1 (dequant/smxx_tiled_layout.hpp), f16 / bf16 activations
};

// Output dtypes (runtime).
enum GemvOut : int {
  kOutF16 = 0,
  kOutBf16 = 1,
  kOutF32 = 2,
};

struct GemvParams {
  const void* x = nullptr;          // activations (m, k) row-major: f16 / bf16 / int8; 16-byte aligned
  const float* x_scales = nullptr;  // int8: (m) per-token scales; else null
  const void* w = nullptr;          // packed weights (gemv or tiled layout), 16-byte aligned
  const uint32_t* scales = nullptr; // packed scales; a 32-bit entry = rows g (low half), g+8 (high half)
  const uint32_t* zeros = nullptr;  // packed zeros (gemv: scale dtype entries; tiled: u8); null when symmetric
  const void* bias = nullptr;       // (n) in the output dtype, or null
  void* y = nullptr;                // output (m, n) row-major, output dtype

  int m = 0;                 // 1..8
  int n = 0;
  int k = 0;                 // multiple of 32
  int tiles = 0;             // ceil(n / 16)
  int chunks = 0;            // ceil(k / 256)
  int warps = 1;             // warps per block (blockDim.x / 32) = the block's k-split, <= chunks
  int slot_bytes = 0;        // bytes of one ring slot (ring_slot_bytes())
  int scale_bf16 = 0;        // scales / zeros stored as bf16 (else f16)
  int out_dtype = kOutF16;   // GemvOut
  int has_zeros = 0;         // zero points stored (integer or float)
  int has_bias = 0;
  int corr_table = 1;        // corrections kept in a per-warp shared-memory table (else per item)
  int corr_offset = 0;       // bytes: the per-warp correction tables
  int corr_stride = 0;       // bytes of one warp's table (ceil(chunks / warps) x slots x 4 x 32)
  int part_offset = 0;       // bytes: partial sums, 2 x phase_tiles x warps x m x 16 floats
  int phase_tiles = 1;       // tiles between two block barriers (the partial sums of a phase)
  int xbuf_offset = 0;       // bytes: tiled layout, the per-warp activation buffers
  int xbuf_stride = 0;       // bytes of one warp's buffer: m x 512 (x_once: S_max x m x 512)
  int x_once = 0;            // tiled, staged kernels: the warp's chunks staged once (else per item)
  int ksplit = 1;            // blocks of a cluster splitting k (sm_90, launched as clusters of ksplit); 1: none
  int tile_interleave = 1;   // block (cluster) b of G owns tiles b, b + G, ... (else a contiguous range)
  int scale_prefetch = 0;    // tiled, grouped: the block's share of the scale (and zero) rows prefetched into L2 after the wait
  // The work split as quotients and remainders, so that the kernel's setup before
  // griddepcontrol.wait has no division (gemv_work_split(); docs/kernels/gemv.md v28):
  int tiles_q = 0;           // tiles / G, G = grid / ksplit blocks (clusters)
  int tiles_r = 0;           // tiles % G: blocks (clusters) 0 .. tiles_r - 1 take one tile more
  int chunks_q = 0;          // chunks / (warps x ksplit)
  int chunks_r = 0;          // chunks % (warps x ksplit): warps 0 .. chunks_r - 1 take one chunk more
  // Act-order weights (the kPermuted kernels: tiled layout, activations staged once): the
  // weight's index buffer (int32 {k', groups', 0, 0, perm[0..k'), ...},
  // dequant/smxx_tiled_layout.hpp), 16-byte aligned, and where the block's copy of the
  // activation rows (act_gather: m k values) or its table of the packed columns' places
  // (k int32) goes. Last, so that the other kernels' parameters keep their offsets.
  const int32_t* act_index = nullptr;
  int place_offset = 0;
  int act_gather = 0;  // act-order: 1 = the lanes gather from the block's copy of the rows, 0 = the table's scatter
};

// Item i of P items split over D parts as q = P / D, r = P % D: part d takes
// gemv_share_count(q, r, d) of them, as many as i = d, d + D, ... below P (the tiles of an
// interleaved block, a warp's chunks), or the contiguous range from gemv_share_first(q, r, d).
// Used by the kernel (device) and its test (host).
constexpr int gemv_share_count(int q, int r, int d) { return q + (d < r ? 1 : 0); }
constexpr int gemv_share_first(int q, int r, int d) { return d * q + (d < r ? d : r); }

// Fills p.tiles_q .. p.chunks_r from p.tiles, p.chunks, p.warps, p.ksplit and the grid.
inline void gemv_work_split(GemvParams& p, int grid) {
  const int G = grid / p.ksplit, kst = p.warps * p.ksplit;
  p.tiles_q = p.tiles / G;
  p.tiles_r = p.tiles % G;
  p.chunks_q = p.chunks / kst;
  p.chunks_r = p.chunks % kst;
}

}  // namespace lowbit::gemv
