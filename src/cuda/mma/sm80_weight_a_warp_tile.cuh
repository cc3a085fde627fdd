// A warp's tile of out^T = W * A^T with mma.sync.m16n8k16 and the weights as the A operand:
// STRIPS strips of 16 output channels (A row blocks, dequantized from the tiled layout in
// registers) by MBLK blocks of 8 tokens (B column blocks, activations via ldmatrix), fp32
// accumulators.
//
// Why weights as A ("swapped" orientation): a token block is 8 wide (the mma n) instead of
// 16 (the mma m), so decode (m <= 8) wastes half as much tensor work on padding, and the
// A fragment of a 16 x 16 weight tile is the same set of (row, k) per lane as two B
// fragments, so the layout serves the other orientation too (docs/kernels/mixed_gemm.md).
//
// Two ways to apply group scales (kScaleAfter):
//   false: the decoder multiplies each weight by its scale in f16/bf16 before the mma
//          (4 HMUL2 per 8 weights, amortised over MBLK token blocks: right for large m).
//   true:  the mma runs on the exact integers q - z, each group's partial sum starts from a
//          zero C (mma_m16n8k16_zero_c) and is added to acc with one fp32 FFMA per element
//          and group (flush): fewer instructions when MBLK is 1 to 4 (one flush per
//          128-column block for groups of 128), and more accurate.
//
// The activation tile in shared memory is [rows][BLOCK_K] 16-bit values, its 16-byte units
// XOR-swizzled by (row & 7) (x_tile_offset), so the 8 row addresses of each ldmatrix matrix
// fall into 8 different bank groups.
#pragma once

#include <cstdint>

#include "cuda/dequant/sm80_tiled_decode.cuh"
#include "cuda/ptx/ldmatrix.cuh"
#include "cuda/ptx/mma.cuh"

namespace lowbit::cuda {

// Byte offset of 16-byte unit `unit` (8 values along k) of row `row` in a [rows][BLOCK_K]
// 16-bit tile.
template <int BLOCK_K>
LOWBIT_HD constexpr int x_tile_offset(int row, int unit) {
  static_assert(BLOCK_K % 64 == 0, "the (row & 7) swizzle needs >= 8 units per row");
  return row * (BLOCK_K * 2) + ((unit ^ (row & 7)) * 16);
}

template <typename T, int BITS, int STRIPS, int MBLK, bool kScaleAfter>
struct WeightAWarpTile {
  using Decoder = tiled::TiledDecoder<T, BITS>;
  using Consts = typename Decoder::Consts;
  static_assert(MBLK == 1 || MBLK % 2 == 0, "token blocks are loaded in pairs (ldmatrix.x4)");

  float acc[STRIPS][MBLK][4];
  // kScaleAfter: partial sums of the two 32-column halves of a chunk (each within one
  // group: groups are >= 32 columns), two independent mma chains.
  float part[2][STRIPS][MBLK][4];

  // Per-lane ldmatrix addressing. Matrix q = lane / 8 of an x4 load reads row lane % 8 of
  // its 8-row block; the row's 16-byte units are XOR-swizzled by (row & 7) = lane & 7.
  //   MBLK >= 2: the lane's row is that of token block 0 (blocks 2jj, 2jj+1 are 16 jj rows
  //              further: immediate offsets); rows past the valid tokens are read as they
  //              are (the tile holds BLOCK_M rows; garbage there only reaches output columns
  //              that are never stored: an mma column depends on its B column only).
  //   MBLK == 1: the tile holds only the valid rows (at most 8), unswizzled, so the row is
  //              clamped to the last one (with one token every lane reads the same row: a
  //              broadcast; with 2..8 the 8-way bank conflict costs 2 ldmatrix per chunk).
  // lane_x = row offset + (k half ^ swizzle key), both in bits 4..6: with the tile and the
  // warp's first column 128-byte aligned (x_base), the swizzled address of byte column c2 (a
  // multiple of 32) is (base ^ (c2 & 127)) + (c2 & ~127), one LOP3 per k16 step whose
  // constant folds into the ldmatrix's immediate offset. (Computing swz() from the row's key
  // and the column per step took ~5 instructions per ldmatrix, and ptxas rematerialized the
  // key from SR_TID.X inside the mainloop; docs/kernels/mixed_gemm.md sm80 notes v12.)
  uint32_t lane_x;

  template <int BLOCK_K>
  LOWBIT_DEVICE void init(int row0, int valid_rows) {
    static_assert((BLOCK_K * 2) % 128 == 0, "tile rows stay 128-byte aligned");
#pragma unroll
    for (int i = 0; i < STRIPS; ++i)
#pragma unroll
      for (int j = 0; j < MBLK; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;
    const int lane = threadIdx.x % 32;
    int row = row0 + (MBLK >= 2 ? (lane / 16) * 8 : 0) + lane % 8;
    if constexpr (MBLK == 1) row = row < valid_rows ? row : valid_rows - 1;
    const int key16 = MBLK >= 2 ? (row & 7) * 16 : 0;
    const int hl16 = MBLK >= 2 ? ((lane / 8) % 2) * 16 : (lane / 8) * 16;
    lane_x = static_cast<uint32_t>(row * (BLOCK_K * 2) + (hl16 ^ key16));
  }

  // The lane's ldmatrix base for an activation tile at shared address x_smem (128-byte
  // aligned) and the warp's first column k0 (a multiple of 64). For token tiles of up to 32
  // the empty asm makes lane_x opaque to the compiler: without it ptxas recomputed it from
  // SR_TID.X in every stage under the register cap (~10 instructions per stage and path).
  // W4 g128 at m = 12 / 16 0.6-0.75 us faster on an H100 and an H200 (docs/kernels/mixed_gemm.md
  // sm80 notes v13).
  // Not for the 64 / 128-token tiles, where the register it holds made three kernels spill
  // more (bf16 8-bit t64: 8 -> 32 bytes of stack), unmeasured.
  LOWBIT_DEVICE uint32_t x_base(uint32_t x_smem, int k0) {
    if constexpr (MBLK <= 4) asm volatile("" : "+r"(lane_x));
    return x_smem + lane_x + static_cast<uint32_t>(k0 * 2);
  }

  // The address of byte column c2 (a multiple of 32, relative to x_base's k0) for this lane.
  LOWBIT_DEVICE static uint32_t x_at(uint32_t xb, int c2) {
    if constexpr (MBLK >= 2) return (xb ^ static_cast<uint32_t>(c2 & 127)) + static_cast<uint32_t>(c2 & ~127);
    else return xb + static_cast<uint32_t>(c2);  // unswizzled
  }

  // B fragments of k16 step columns [k0 + kc, k0 + kc + 16) (kc a multiple of 16), MBLK >= 2.
  template <int BLOCK_K>
  LOWBIT_DEVICE void load_b(uint32_t (&b)[MBLK][2], uint32_t xb, int kc) const {
    static_assert(MBLK >= 2, "");
    const uint32_t base = x_at(xb, kc * 2);
#pragma unroll
    for (int jj = 0; jj < MBLK / 2; ++jj) {
      uint32_t r[4];
      ptx::ldmatrix_x4(r, base + jj * 16 * (BLOCK_K * 2));
      b[2 * jj][0] = r[0];
      b[2 * jj][1] = r[1];
      b[2 * jj + 1][0] = r[2];
      b[2 * jj + 1][1] = r[3];
    }
  }

  // B fragments of two consecutive k16 steps [k0 + kc, k0 + kc + 32) for the single token
  // block.
  LOWBIT_DEVICE void load_b2(uint32_t (&b0)[MBLK][2], uint32_t (&b1)[MBLK][2], uint32_t xb, int kc) const {
    static_assert(MBLK == 1, "");
    uint32_t r[4];  // matrices: columns k, k+8, k+16, k+24
    ptx::ldmatrix_x4(r, x_at(xb, kc * 2));
    b0[0][0] = r[0];
    b0[0][1] = r[1];
    b1[0][0] = r[2];
    b1[0][1] = r[3];
  }

  // One k16 step: decode step kStep of every strip's chunk and multiply with every B.
  // kScaleAfter: step kStep accumulates into half kHalf, starting it (C = 0) when kFresh.
  // kSym: symmetric weights (the decoder may take a cheaper path that ignores c's zeros).
  template <int kStep, int kHalf, bool kFresh, bool kSym = false>
  LOWBIT_DEVICE void step(const uint4 (&wq)[STRIPS], const Consts (&c)[STRIPS], const uint32_t (&b)[MBLK][2]) {
#pragma unroll
    for (int i = 0; i < STRIPS; ++i) {
      uint32_t a[4];
      Decoder::template step<kStep, !kScaleAfter, kSym>(wq[i], c[i], a);
#pragma unroll
      for (int j = 0; j < MBLK; ++j) {
        if constexpr (!kScaleAfter) ptx::mma_m16n8k16<T>(acc[i][j], a, b[j]);
        else if constexpr (kFresh) ptx::mma_m16n8k16_zero_c<T>(part[kHalf][i][j], a, b[j]);
        else ptx::mma_m16n8k16<T>(part[kHalf][i][j], a, b[j]);
      }
    }
  }

  // kScaleAfter: acc += part[h] * s[h] for the kHalves halves, with s[h][i][0] the scale of
  // channel g of strip i and s[h][i][1] that of channel g + 8 (C fragment rows: elements
  // 0, 1 are row g, 2, 3 row g + 8).
  template <int kHalves>
  LOWBIT_DEVICE void flush(const float (&s)[2][STRIPS][2]) {
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
#pragma unroll
      for (int i = 0; i < STRIPS; ++i)
#pragma unroll
        for (int j = 0; j < MBLK; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][j][e] = fmaf(part[h][i][j][e], s[h][i][e / 2], acc[i][j][e]);
  }
};

}  // namespace lowbit::cuda
