// Tests of the gemv layout (include/lowbit/pack_gemv.hpp, src/cuda/gemv/smxx_gemv_layout.hpp)
// without a GPU: pack / unpack round trips for every width, group, zero-point mode and scale
// dtype on odd shapes; the decode of every register of every width against the bit
// placement; and a host emulation of the kernel's arithmetic (mma.m16n8k16 / m16n8k32 with
// the PTX fragment definitions) against a plain dot product, which checks that the lane ->
// (row, column) mapping of the weights matches the one of the activations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/gemv/smxx_gemv_bitserial_params.hpp"
#include "cuda/gemv/smxx_gemv_layout.hpp"
#include "cuda/gemv/smxx_gemv_params.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/pack_gemv.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"

namespace {

using namespace lowbit;

constexpr int kWidths[] = {1, 2, 3, 4, 5, 6, 8};
constexpr ZeroPoint kZeroModes[] = {ZeroPoint::kSymmetric, ZeroPoint::kInteger, ZeroPoint::kFloat};
constexpr int kGroups[] = {32, 64, 128, 0};

uint32_t g_seed = 7100;

IntWeight random_weight(const IntWeightFormat& f, int64_t n, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n * k));
  for (float& v : x) v = normal(rng) + (f.zero == ZeroPoint::kSymmetric ? 0.0f : 0.3f);
  return quantize_int(x.data(), n, k, f);
}

std::string case_name(const IntWeightFormat& f, int64_t n, int64_t k) {
  return f.name() + " " + dtype_name(f.scale_dtype) + " scales, n=" + std::to_string(n) + " k=" + std::to_string(k);
}

TEST(PackGemv, RoundTripEveryFormatOddShapes) {
  for (int bits : kWidths)
    for (ZeroPoint z : kZeroModes)
      for (int gs : kGroups)
        for (DType sdt : {DType::kF16, DType::kBF16}) {
          IntWeightFormat f;
          f.bits = bits;
          f.zero = z;
          f.group_size = gs;
          f.scale_dtype = sdt;
          const int g = gs == 0 ? 32 : gs;
          for (int64_t n : {1, 17, 37})
            for (int64_t k : {int64_t{g}, int64_t{g} * 9}) {
              const uint32_t seed = g_seed++;
              std::mt19937 rng(seed);
              const IntWeight w = random_weight(f, n, k, rng);
              SCOPED_TRACE(case_name(f, n, k) + " seed " + std::to_string(seed));
              const PackedWeight p = pack_gemv(w);
              const GemvLayoutGeometry geo = gemv_layout_geometry(f, n, k);
              ASSERT_EQ(p.layout, gemv_layout_name(bits));
              ASSERT_EQ(p.data.size(), geo.data_bytes);
              ASSERT_EQ(p.scales.size(), geo.scale_bytes);
              ASSERT_EQ(p.zeros.size(), z == ZeroPoint::kSymmetric ? 0u : geo.scale_bytes);
              const IntWeight u = unpack_gemv(p);
              ASSERT_EQ(u.codes, w.codes);
              ASSERT_EQ(u.scales, w.scales);
              ASSERT_EQ(u.zeros, w.zeros);
              ASSERT_EQ(u.zeros_f, w.zeros_f);
            }
        }
}

TEST(PackGemv, RejectsWhatTheLayoutCannotHold) {
  IntWeightFormat f;
  f.bits = 7;
  EXPECT_FALSE(gemv_layout_supports(f, 16, 128).ok());
  f.bits = 4;
  EXPECT_FALSE(gemv_layout_supports(f, 16, 100).ok());  // k not a multiple of 32
  f.scale_dtype = DType::kF32;
  EXPECT_FALSE(gemv_layout_supports(f, 16, 128).ok());
  f.scale_dtype = DType::kF16;
  f.act_order = true;
  EXPECT_FALSE(gemv_layout_supports(f, 16, 128).ok());
  f.act_order = false;
  EXPECT_TRUE(gemv_layout_supports(f, 1, 128).ok());
}

// Every register of every width: the decoded patterns are c_R + q exactly, where q is read
// from the words by the documented bit placement (code_bit), for random words.
template <int kBits, bool kBf16>
void check_decode(std::mt19937& rng) {
  SCOPED_TRACE("w" + std::to_string(kBits) + (kBf16 ? " bf16" : " f16"));
  std::uniform_int_distribution<uint32_t> u32;
  for (int trial = 0; trial < 64; ++trial) {
    uint32_t w[4 * kBits];
    for (uint32_t& x : w) x = u32(rng);
    for (int r = 0; r < gemv::kRegsPerChunk; ++r) {
      const uint32_t a = gemv::raw_reg<kBits, kBf16>(w, r);
      const float c = gemv::reg_offset(kBits, kBf16, r);
      for (int h = 0; h < 2; ++h) {
        uint32_t q = 0;
        for (int j = 0; j < kBits; ++j) {
          const gemv::BitPos bp = gemv::code_bit(kBits, r, j);
          q |= ((w[bp.word] >> (bp.bit + 16 * h)) & 1u) << j;
        }
        const uint16_t half = static_cast<uint16_t>(a >> (16 * h));
        const float v = kBf16 ? bf16_to_f32(half) : f16_to_f32(half);
        ASSERT_EQ(v, c + static_cast<float>(q)) << "register " << r << " half " << h;
      }
    }
  }
}

TEST(PackGemv, DecodeOfEveryRegisterIsOffsetPlusCode) {
  std::mt19937 rng(g_seed++);
  check_decode<1, false>(rng), check_decode<1, true>(rng);
  check_decode<2, false>(rng), check_decode<2, true>(rng);
  check_decode<3, false>(rng), check_decode<3, true>(rng);
  check_decode<4, false>(rng), check_decode<4, true>(rng);
  check_decode<5, false>(rng), check_decode<5, true>(rng);
  check_decode<6, false>(rng), check_decode<6, true>(rng);
  check_decode<8, false>(rng), check_decode<8, true>(rng);
}

TEST(PackGemv, EveryCodeHasOneBitPerPosition) {
  // The bit placement is a bijection: (register, bit) -> (word, bit of the half).
  for (int bits : kWidths) {
    std::vector<int> used(static_cast<size_t>(4 * bits * 16), 0);
    for (int r = 0; r < gemv::kRegsPerChunk; ++r)
      for (int j = 0; j < bits; ++j) {
        const gemv::BitPos bp = gemv::code_bit(bits, r, j);
        ASSERT_GE(bp.word, 0);
        ASSERT_LT(bp.word, 4 * bits);
        ASSERT_LT(bp.bit, 16);
        ++used[static_cast<size_t>(bp.word * 16 + bp.bit)];
      }
    for (int u : used) ASSERT_EQ(u, 1) << "w" << bits;
  }
}

// ---------------------------------------------------------------------------------------
// Host emulation of one (tile, chunk) item of the kernel, f16 activations.
// ---------------------------------------------------------------------------------------

// D (16 x 8) += A (16 x 16) B (16 x 8) from per-lane fragments (PTX ISA, "Matrix Fragments
// for mma.m16n8k16"; the same table as src/cuda/ptx/mma.cuh), in double.
void mma16816(double (&d)[32][4], const uint32_t (&a)[32][4], const uint32_t (&b)[32][2], bool bf16) {
  auto val = [&](uint32_t reg, int h) {
    const uint16_t x = static_cast<uint16_t>(reg >> (16 * h));
    return static_cast<double>(bf16 ? bf16_to_f32(x) : f16_to_f32(x));
  };
  double A[16][16], B[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int h = 0; h < 2; ++h) {
      A[g][2 * t + h] = val(a[lane][0], h);
      A[g + 8][2 * t + h] = val(a[lane][1], h);
      A[g][2 * t + 8 + h] = val(a[lane][2], h);
      A[g + 8][2 * t + 8 + h] = val(a[lane][3], h);
      B[2 * t + h][g] = val(b[lane][0], h);
      B[2 * t + 8 + h][g] = val(b[lane][1], h);
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      const int row = g + 8 * (i / 2), col = 2 * t + (i % 2);
      double s = 0;
      for (int kk = 0; kk < 16; ++kk) s += A[row][kk] * B[kk][col];
      d[lane][i] += s;
    }
  }
}

template <int kBits>
void emulate_f16(ZeroPoint zmode, int gs, int m, std::mt19937& rng) {
  IntWeightFormat f;
  f.bits = kBits;
  f.zero = zmode;
  f.group_size = gs;
  f.scale_dtype = DType::kF16;
  const int64_t n = 16, k = 384;  // one tile, two chunks (the second half-filled)
  const IntWeight w = random_weight(f, n, k, rng);
  const PackedWeight p = pack_gemv(w);
  const GemvLayoutGeometry geo = gemv_layout_geometry(f, n, k);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(m * k));
  for (float& v : x) v = f16_to_f32(f32_to_f16(normal(rng)));
  const std::vector<float> wd = dequantize(w);
  const float zsym = static_cast<float>(1 << (kBits - 1));

  double acc[32][4] = {};
  const int slots = geo.slots, ppg = gemv::kPairs / slots;
  for (int64_t chunk = 0; chunk < geo.chunks; ++chunk) {
    uint32_t words[32][4 * 8];
    for (int lane = 0; lane < 32; ++lane)
      for (int wi = 0; wi < 4 * kBits; ++wi)
        std::memcpy(&words[lane][wi],
                    p.data.data() + (chunk * kBits + wi / 4) * gemv::kSliceBytes + lane * 16 + (wi % 4) * 4, 4);
    for (int gi = 0; gi < slots; ++gi) {
      double cg[32][4] = {}, cx[32][4] = {}, cd[32][4] = {};
      for (int pp = 0; pp < ppg; ++pp) {
        const int pair = gi * ppg + pp;
        for (int h = 0; h < 2; ++h) {
          uint32_t a[32][4], ac[32][4], ones[32][4], b[32][2];
          for (int lane = 0; lane < 32; ++lane) {
            const int g = lane / 4, t = lane % 4;
            for (int e = 0; e < 4; ++e) {
              const int r = 8 * pair + 4 * h + e;
              a[lane][e] = gemv::raw_reg<kBits, false>(words[lane], r);
              const uint16_t c = f32_to_f16(-(gemv::reg_offset(kBits, false, r) + zsym));
              ac[lane][e] = c | (static_cast<uint32_t>(c) << 16);
              ones[lane][e] = 0x3C003C00u;
            }
            for (int j = 0; j < 2; ++j) {
              uint32_t reg = 0;
              for (int hh = 0; hh < 2; ++hh) {
                const int64_t col = chunk * 256 + 32 * pair + 8 * t + 4 * h + 2 * j + hh;
                const float v = (g < m && col < k) ? x[static_cast<size_t>(g * k + col)] : 0.0f;
                reg |= static_cast<uint32_t>(f32_to_f16(v)) << (16 * hh);
              }
              b[lane][j] = reg;
            }
          }
          mma16816(cg, ac, b, false);
          mma16816(cx, ones, b, false);
          mma16816(cd, a, b, false);
        }
      }
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane / 4;
        for (int i = 0; i < 4; ++i) {
          const int row = g + 8 * (i / 2);
          const int64_t group = gs == 0 ? 0 : (chunk * 256 + 32 * gi * ppg) / gs;
          if (group >= w.groups()) continue;
          const double s = w.scales[static_cast<size_t>(row * w.groups() + group)];
          double ct = cd[lane][i] + cg[lane][i];
          if (zmode != ZeroPoint::kSymmetric) ct += (zsym - w.zero_of(row, group)) * cx[lane][i];
          acc[lane][i] += s * ct;
        }
      }
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      const int row = g + 8 * (i / 2), mm = 2 * t + (i % 2);
      if (mm >= m) continue;
      double ref = 0, mag = 0;
      for (int64_t c = 0; c < k; ++c) {
        ref += static_cast<double>(wd[static_cast<size_t>(row * k + c)]) * x[static_cast<size_t>(mm * k + c)];
        mag += std::fabs(static_cast<double>(wd[static_cast<size_t>(row * k + c)]) * x[static_cast<size_t>(mm * k + c)]);
      }
      ASSERT_NEAR(acc[lane][i], ref, 1e-9 * mag + 1e-12) << "row " << row << " m " << mm;
    }
  }
}

TEST(PackGemv, EmulatedKernelArithmeticMatchesDotProducts) {
  std::mt19937 rng(g_seed++);
  for (ZeroPoint z : kZeroModes)
    for (int gs : kGroups) {
      SCOPED_TRACE(std::string("zero mode ") + std::to_string(static_cast<int>(z)) + " group " + std::to_string(gs));
      emulate_f16<1>(z, gs, 3, rng);
      emulate_f16<2>(z, gs, 8, rng);
      emulate_f16<3>(z, gs, 1, rng);
      emulate_f16<4>(z, gs, 5, rng);
      emulate_f16<5>(z, gs, 2, rng);
      emulate_f16<6>(z, gs, 7, rng);
      emulate_f16<8>(z, gs, 4, rng);
    }
}

// int8 path: mma.m16n8k32 u8 x s8 fragments (src/cuda/ptx/mma_int8.cuh) on the same words;
// the activations in the column order int8_col_perm().
template <int kBits>
void emulate_int8(std::mt19937& rng) {
  IntWeightFormat f;
  f.bits = kBits;
  f.zero = ZeroPoint::kInteger;
  f.group_size = 64;
  const int64_t n = 16, k = 256;
  const IntWeight w = random_weight(f, n, k, rng);
  const PackedWeight p = pack_gemv(w);
  std::uniform_int_distribution<int> xi(-127, 127);
  const int m = 8;
  std::vector<int> x(static_cast<size_t>(m * k));
  for (int& v : x) v = xi(rng);
  uint32_t words[32][4 * 8];
  for (int lane = 0; lane < 32; ++lane)
    for (int wi = 0; wi < 4 * kBits; ++wi)
      std::memcpy(&words[lane][wi], p.data.data() + (wi / 4) * gemv::kSliceBytes + lane * 16 + (wi % 4) * 4, 4);
  // Per pair: D[row][m] = sum_kappa A[row][kappa] B[kappa][m].
  for (int pair = 0; pair < 8; ++pair) {
    int A[16][32], B[32][8];
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane / 4, t = lane % 4;
      uint32_t a[4];
      gemv::int8_pair<kBits>(words[lane], pair, a);
      for (int i = 0; i < 4; ++i) {
        A[g][4 * t + i] = (a[0] >> (8 * i)) & 0xFF;
        A[g + 8][4 * t + i] = (a[1] >> (8 * i)) & 0xFF;
        A[g][16 + 4 * t + i] = (a[2] >> (8 * i)) & 0xFF;
        A[g + 8][16 + 4 * t + i] = (a[3] >> (8 * i)) & 0xFF;
        // B: lane's 8 activations of columns 32 pair + 8 t + perm(i) (+ 4 for b[1]).
        B[4 * t + i][g] = x[static_cast<size_t>(g * k + 32 * pair + 8 * t + gemv::int8_col_perm(kBits, i))];
        B[16 + 4 * t + i][g] = x[static_cast<size_t>(g * k + 32 * pair + 8 * t + 4 + gemv::int8_col_perm(kBits, i))];
      }
    }
    for (int row = 0; row < 16; ++row)
      for (int mm = 0; mm < m; ++mm) {
        int64_t d = 0, ref = 0;
        for (int kk = 0; kk < 32; ++kk) d += static_cast<int64_t>(A[row][kk]) * B[kk][mm];
        for (int c = 32 * pair; c < 32 * pair + 32; ++c)
          ref += static_cast<int64_t>(w.codes[static_cast<size_t>(row * k + c)]) * x[static_cast<size_t>(mm * k + c)];
        ASSERT_EQ(d, ref) << "w" << kBits << " pair " << pair << " row " << row << " m " << mm;
      }
  }
}

TEST(PackGemv, EmulatedInt8ArithmeticMatchesDotProducts) {
  std::mt19937 rng(g_seed++);
  emulate_int8<4>(rng);
  emulate_int8<8>(rng);
}

// The bit-serial kernel's view of the 1- and 2-bit layouts (smxx_gemv_bitserial_params.hpp):
// the masks (row, weight bit) partition a word's 32 bit positions, every code's bit j lies in
// the mask of its row and j, the activation-plane position of that bit is the code's column
// (so AND + popcount pairs each code with its own activation), and a 1-bit word's halves
// 0x00FF00FF / 0xFF00FF00 are its two 32-column pairs (groups of 32).
TEST(gemv_layout, bitserial_masks_and_columns) {
  using namespace gemv;
  for (int bits : {1, 2}) {
    for (int b = 0; b < 32; ++b) {
      int owners = 0;
      for (int hi = 0; hi < 2; ++hi)
        for (int j = 0; j < bits; ++j) owners += (bitserial::row_mask(bits, hi, j) >> b) & 1;
      EXPECT_EQ(owners, 1) << "bits " << bits << " position " << b;
    }
    for (int lane = 0; lane < 32; ++lane)
      for (int reg = 0; reg < kRegsPerChunk; ++reg)
        for (int half = 0; half < 2; ++half)
          for (int j = 0; j < bits; ++j) {
            const CodePos cp = code_pos(lane, reg, half);
            const BitPos bp = code_bit(bits, reg, j);
            const int b = bp.bit + 16 * half;
            const int hi = cp.row >= 8 ? 1 : 0;
            SCOPED_TRACE("bits " + std::to_string(bits) + " lane " + std::to_string(lane) + " reg " +
                         std::to_string(reg) + " half " + std::to_string(half) + " j " + std::to_string(j));
            EXPECT_EQ(bitserial::column_of(bits, bp.word, lane % 4, b), cp.col);
            EXPECT_EQ((bitserial::row_mask(bits, hi, j) >> b) & 1u, 1u);
            if (bits == 1) {
              const uint32_t pair_mask = (cp.col % 64) < 32 ? 0x00FF00FFu : 0xFF00FF00u;
              EXPECT_EQ((pair_mask >> b) & 1u, 1u);
              EXPECT_EQ(cp.col / 64, bp.word);  // a 1-bit word covers 64 columns
            } else {
              EXPECT_EQ(cp.col / 32, bp.word);  // a 2-bit word covers 32 columns
            }
          }
  }
}

// The GEMV kernel's work split (smxx_gemv.cuh) from the host's quotients and remainders
// (gemv_work_split): every tile belongs to exactly one block (cluster) in both tile orders, each
// block has as many tiles as the kernel walks (t0, t0 + tstep, ... below the tile count), and
// every warp of a cluster as many chunks as vw, vw + KST, ... below the chunk count.
TEST(PackGemv, WorkSplitPartitionsTilesAndChunks) {
  for (int tiles : {1, 7, 16, 131, 132, 133, 256, 384, 1792, 1793}) {
    for (int grid : {1, 2, 66, 132, 264}) {
      for (int ksplit : {1, 2, 4}) {
        if (grid % ksplit != 0) continue;
        for (int warps : {1, 4, 8, 16}) {
          for (int chunks : {1, 3, 16, 56, 57}) {
            if (warps * ksplit > chunks) continue;  // the launch keeps the k-split <= chunks
            gemv::GemvParams p;
            p.tiles = tiles, p.chunks = chunks, p.warps = warps, p.ksplit = ksplit;
            gemv::gemv_work_split(p, grid);
            const int G = grid / ksplit, kst = warps * ksplit;
            std::vector<int> owner_inter(tiles, 0), owner_contig(tiles, 0);
            int next = 0;
            for (int b = 0; b < G; ++b) {
              const int nt = gemv::gemv_share_count(p.tiles_q, p.tiles_r, b);
              int walked = 0;
              for (int t = b; t < tiles; t += G) ++owner_inter[t], ++walked;
              ASSERT_EQ(nt, walked) << tiles << " tiles, block " << b << " of " << G;
              const int t0 = gemv::gemv_share_first(p.tiles_q, p.tiles_r, b);
              ASSERT_EQ(t0, next) << tiles << " tiles, block " << b << " of " << G;
              for (int t = t0; t < t0 + nt; ++t) ++owner_contig[t];
              next = t0 + nt;
            }
            EXPECT_EQ(next, tiles);
            for (int t = 0; t < tiles; ++t) ASSERT_TRUE(owner_inter[t] == 1 && owner_contig[t] == 1) << "tile " << t;
            int total = 0;
            for (int vw = 0; vw < kst; ++vw) {
              int walked = 0;
              for (int c = vw; c < chunks; c += kst) ++walked;
              ASSERT_EQ(gemv::gemv_share_count(p.chunks_q, p.chunks_r, vw), walked) << chunks << " chunks, warp " << vw;
              total += walked;
            }
            EXPECT_EQ(total, chunks);
          }
        }
      }
    }
  }
}

}  // namespace
