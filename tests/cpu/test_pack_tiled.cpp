// Tests of the tiled layout (include/lowbit/pack.hpp, cuda/dequant/smxx_tiled_layout.hpp),
// without a GPU: the geometry covers every (row, column) once, a lane's decoded registers
// are exactly its mma.m16n8k16 A fragments (PTX ISA definition, frag_a_pos), packing is
// exactly invertible for every supported format, and act-order plans are permutations with
// homogeneous groups for any g_idx.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cuda/dequant/smxx_tiled_layout.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/pack.hpp"
#include "lowbit/quantize.hpp"

namespace {

using namespace lowbit;

uint32_t g_seed = 7000;  // fresh data per case; the seed is printed on failure

IntWeightFormat make_format(int bits, int group, ZeroPoint zero, DType sdt, bool act = false) {
  IntWeightFormat f;
  f.bits = bits;
  f.group_size = group;
  f.zero = zero;
  f.scale_dtype = sdt;
  f.act_order = act;
  return f;
}

std::vector<int32_t> random_g_idx(int64_t k, int group, bool uniform, std::mt19937& rng) {
  const int64_t groups = k / group;
  std::vector<int32_t> g(static_cast<size_t>(k));
  if (uniform) {  // GPTQ act-order: every group exactly `group` columns, in a random order
    for (int64_t c = 0; c < k; ++c) g[static_cast<size_t>(c)] = static_cast<int32_t>(c / group);
    std::shuffle(g.begin(), g.end(), rng);
  } else {  // any g_idx: groups of any size, some empty
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(std::max<int64_t>(groups / 2, 1) - 1));
    for (auto& x : g) x = pick(rng);
  }
  return g;
}

IntWeight random_weight(const IntWeightFormat& f, int64_t n, int64_t k, std::mt19937& rng,
                        bool uniform_act = true) {
  std::vector<float> w(static_cast<size_t>(n * k));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> shift(-1.0f, 1.0f);
  for (int64_t r = 0; r < n; ++r) {
    const float mean = f.zero == ZeroPoint::kInteger ? shift(rng) : 0.0f;
    for (int64_t c = 0; c < k; ++c) w[static_cast<size_t>(r * k + c)] = mean + normal(rng);
  }
  std::vector<int32_t> g_idx;
  if (f.act_order) g_idx = random_g_idx(k, f.group_size, uniform_act, rng);
  return quantize_int(w.data(), n, k, f, f.act_order ? g_idx.data() : nullptr);
}

float half_value(uint32_t reg, int half, bool bf16) {
  const uint16_t h = static_cast<uint16_t>(half ? reg >> 16 : reg & 0xFFFF);
  return bf16 ? bf16_to_f32(h) : f16_to_f32(h);
}

TEST(tiled_layout, geometry_covers_each_position_once) {
  for (int bits : {4, 8}) {
    const int ck = tiled::chunk_k(bits);
    std::set<std::pair<int, int>> seen;
    for (int lane = 0; lane < 32; ++lane)
      for (int e = 0; e < 128 / bits; ++e) {
        const tiled::Pos p = bits == 4 ? tiled::w4_code_pos(lane, e / 8, e % 8) : tiled::w8_code_pos(lane, e / 4, e % 4);
        ASSERT_GE(p.n, 0);
        ASSERT_LT(p.n, 16);
        ASSERT_GE(p.k, 0);
        ASSERT_LT(p.k, ck);
        EXPECT_TRUE(seen.insert({p.n, p.k}).second) << "bits " << bits << " lane " << lane << " code " << e;
      }
    EXPECT_EQ(seen.size(), static_cast<size_t>(16 * ck)) << "bits " << bits;
  }
}

TEST(tiled_layout, scale_index_pairs_rows_g_and_g_plus_8) {
  const int64_t n = 64;
  std::set<int64_t> seen;
  for (int64_t row = 0; row < n; ++row) {
    const int64_t i = tiled::scale_index(n, 2, row);
    EXPECT_TRUE(seen.insert(i).second);
    EXPECT_EQ(i / 16, 2 * n / 16 + row / 16);  // inside the row's strip
    EXPECT_EQ(i % 16, 2 * (row % 8) + (row % 16) / 8);
  }
}

// The raw decode of every lane's chunk gives, register by register, the codes the PTX ISA
// puts in the A fragment of that lane: a whole weight is packed, then every chunk decoded.
void check_fragments(int bits, DType act) {
  std::mt19937 rng(++g_seed);
  const int64_t n = 32, k = 128;
  const IntWeightFormat f = make_format(bits, 64, ZeroPoint::kInteger, act);
  const IntWeight w = random_weight(f, n, k, rng);
  const PackedWeight p = pack_tiled(w);
  const bool bf16 = act == DType::kBF16;
  const int ck = tiled::chunk_k(bits);
  for (int64_t strip = 0; strip < n / 16; ++strip)
    for (int64_t kc = 0; kc < k / ck; ++kc)
      for (int lane = 0; lane < 32; ++lane) {
        uint32_t words[4];
        std::memcpy(words, p.data.data() + tiled::chunk_offset(bits, k, strip, kc, lane), 16);
        for (int step = 0; step < ck / 16; ++step) {
          float v[4][2];  // magic + code, per register and half
          if (bits == 4) {
            uint32_t r[4];
            if (bf16) tiled::raw_w4_bf16(words[step], r); else tiled::raw_w4_f16(words[step], r);
            for (int q = 0; q < 4; ++q)
              for (int h = 0; h < 2; ++h) {
                float x = half_value(r[q], h, bf16);
                if (!bf16) x = (q % 2) ? x / 16.0f - 64.0f : x - 1024.0f;  // regs 1, 3 carry 1024 + 16 q
                else x -= 128.0f;
                v[q][h] = x;
              }
          } else if (!bf16) {
            uint32_t r[4];
            tiled::raw_w8_f16(words[2 * step], words[2 * step + 1], r);
            for (int q = 0; q < 4; ++q)
              for (int h = 0; h < 2; ++h) v[q][h] = half_value(r[q], h, false) - 1024.0f;
          } else {
            for (int hw = 0; hw < 2; ++hw) {  // word 2 step + hw gives regs 2 hw, 2 hw + 1
              uint32_t fl[4];
              tiled::raw_w8_f32(words[2 * step + hw], fl);
              for (int j = 0; j < 4; ++j) {
                float x;
                std::memcpy(&x, &fl[j], 4);
                v[2 * hw + j / 2][j % 2] = x - 8388608.0f;
              }
            }
          }
          for (int q = 0; q < 4; ++q)
            for (int h = 0; h < 2; ++h) {
              const tiled::Pos fp = tiled::frag_a_pos(lane, q, h);
              const int64_t row = strip * 16 + fp.n, col = kc * ck + step * 16 + fp.k;
              ASSERT_EQ(v[q][h], static_cast<float>(w.codes[static_cast<size_t>(row * k + col)]))
                  << "bits " << bits << " " << dtype_name(act) << " strip " << strip << " chunk " << kc
                  << " lane " << lane << " step " << step << " reg " << q << " half " << h << " seed " << g_seed;
            }
        }
      }
}

// The symmetric bf16 8-bit decode: m - s (each exact in bf16) is q - 128 for every byte q in
// every byte position, row g from bytes 0 and 2, row g + 8 from bytes 1 and 3.
TEST(tiled_layout, w8_bf16_split_decode_is_q_minus_128) {
  for (uint32_t q = 0; q < 256; ++q) {
    const uint32_t b[4] = {q, (q + 37) % 256, (q + 128) % 256, 255 - q};
    const uint32_t w = b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24;
    uint32_t m[2], sub[2];
    tiled::raw_w8_bf16_split(w, m, sub);
    for (int r = 0; r < 2; ++r)
      for (int h = 0; h < 2; ++h) {
        const float mv = half_value(m[r], h, true), sv = half_value(sub[r], h, true);
        const int byte = r + 2 * h;  // reg 0: bytes 0, 2; reg 1: bytes 1, 3
        EXPECT_EQ(mv - sv, static_cast<float>(static_cast<int>(b[byte]) - 128)) << "q " << q << " byte " << byte;
        EXPECT_TRUE(mv >= 128.f && mv < 256.f && (sv == 128.f || sv == 256.f)) << "q " << q << " byte " << byte;
      }
  }
}

TEST(tiled_layout, w4_f16_decode_is_the_mma_a_fragment) { check_fragments(4, DType::kF16); }
TEST(tiled_layout, w4_bf16_decode_is_the_mma_a_fragment) { check_fragments(4, DType::kBF16); }
TEST(tiled_layout, w8_f16_decode_is_the_mma_a_fragment) { check_fragments(8, DType::kF16); }
TEST(tiled_layout, w8_bf16_decode_is_the_mma_a_fragment) { check_fragments(8, DType::kBF16); }

// pack -> unpack is the identity on codes, scales, zeros and g_idx.
void check_roundtrip(const IntWeightFormat& f, int64_t n, int64_t k, bool uniform_act = true) {
  std::mt19937 rng(++g_seed);
  const IntWeight w = random_weight(f, n, k, rng, uniform_act);
  const PackedWeight p = pack_tiled(w);
  EXPECT_EQ(p.layout, tiled_layout_name(f.bits));
  const IntWeight u = unpack_tiled(p);
  const std::string what = f.name() + " " + dtype_name(f.scale_dtype) + " n=" + std::to_string(n) +
                           " k=" + std::to_string(k) + " seed " + std::to_string(g_seed);
  EXPECT_EQ(u.codes, w.codes) << what;
  EXPECT_EQ(u.g_idx, w.g_idx) << what;
  // Scales / zeros: equal for every group that owns a column (act-order may leave groups
  // empty; those keep nothing).
  std::vector<bool> used(static_cast<size_t>(w.groups()), !f.act_order);
  for (int32_t g : w.g_idx) used[static_cast<size_t>(g)] = true;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t g = 0; g < w.groups(); ++g) {
      if (!used[static_cast<size_t>(g)]) continue;
      const size_t i = static_cast<size_t>(r * w.groups() + g);
      ASSERT_EQ(u.scales[i], w.scales[i]) << what << " row " << r << " group " << g;
      if (f.zero == ZeroPoint::kInteger) ASSERT_EQ(u.zeros[i], w.zeros[i]) << what << " row " << r << " group " << g;
    }
  // Packed sizes: codes at bits/8 bytes per weight (k' columns), scales per (packed) group.
  const int64_t kp = f.act_order ? reinterpret_cast<const int32_t*>(p.index.data())[0] : k;
  EXPECT_EQ(p.data.size(), static_cast<size_t>(n * kp * f.bits / 8)) << what;
}

TEST(pack_tiled, roundtrip_every_format) {
  for (int bits : {4, 8})
    for (ZeroPoint z : {ZeroPoint::kSymmetric, ZeroPoint::kInteger})
      for (int group : {32, 64, 128, 0})
        for (DType sdt : {DType::kF16, DType::kBF16}) check_roundtrip(make_format(bits, group, z, sdt), 48, 256);
}

TEST(pack_tiled, roundtrip_shapes) {
  for (int64_t n : {16, 64, 80})
    for (int64_t k : {64, 192, 640}) {
      check_roundtrip(make_format(4, 64, ZeroPoint::kInteger, DType::kF16), n, k);
      check_roundtrip(make_format(8, 0, ZeroPoint::kSymmetric, DType::kBF16), n, k);
    }
}

TEST(pack_tiled, roundtrip_act_order_uniform_and_any_g_idx) {
  for (int bits : {4, 8})
    for (int group : {32, 64, 128})
      for (bool uniform : {true, false})
        check_roundtrip(make_format(bits, group, ZeroPoint::kInteger, DType::kF16, true), 32, 512, uniform);
}

TEST(pack_tiled, act_order_plan_is_a_grouped_permutation) {
  std::mt19937 rng(++g_seed);
  for (int group : {32, 64, 128})
    for (bool uniform : {true, false}) {
      const int64_t k = 1024;
      const std::vector<int32_t> g_idx = random_g_idx(k, group, uniform, rng);
      const TiledActOrder plan = plan_tiled_act_order(g_idx.data(), k, group);
      const std::string what = "group " + std::to_string(group) + (uniform ? " uniform" : " any");
      EXPECT_EQ(plan.uniform, uniform) << what;
      EXPECT_EQ(plan.k_packed % 64, 0) << what;
      EXPECT_LE(plan.k_packed, tiled_act_order_max_k(k)) << what;
      if (uniform) EXPECT_EQ(plan.k_packed, k) << what;
      EXPECT_EQ(plan.groups_packed * group, plan.k_packed) << what;
      std::vector<int> count(static_cast<size_t>(k), 0);
      for (int64_t j = 0; j < plan.k_packed; ++j) {
        const int32_t c = plan.perm[static_cast<size_t>(j)];
        if (c < 0) continue;
        ++count[static_cast<size_t>(c)];
        // every real column of a packed group belongs to the group recorded for it
        EXPECT_EQ(g_idx[static_cast<size_t>(c)], plan.group_of[static_cast<size_t>(j / group)]) << what << " j " << j;
      }
      for (int64_t c = 0; c < k; ++c) EXPECT_EQ(count[static_cast<size_t>(c)], 1) << what << " column " << c;
      const std::vector<int32_t> idx = plan.index_buffer();
      ASSERT_EQ(idx.size(), static_cast<size_t>(4 + plan.k_packed + plan.groups_packed));
      EXPECT_EQ(idx[0], plan.k_packed);
      EXPECT_EQ(idx[1], plan.groups_packed);
    }
}

TEST(pack_tiled, padding_columns_dequantize_to_zero) {
  // Non-uniform act-order pads runs with zero columns: their code is the zero point.
  std::mt19937 rng(++g_seed);
  const IntWeightFormat f = make_format(4, 64, ZeroPoint::kInteger, DType::kF16, true);
  const IntWeight w = random_weight(f, 16, 256, rng, false);
  const PackedWeight p = pack_tiled(w);
  const int32_t* idx = reinterpret_cast<const int32_t*>(p.index.data());
  const int64_t kp = idx[0];
  const int32_t* perm = idx + 4;
  const int32_t* group_of = perm + kp;
  int padded = 0;
  for (int lane = 0; lane < 32; ++lane)
    for (int64_t kc = 0; kc < kp / 64; ++kc) {
      const uint8_t* chunk = p.data.data() + tiled::chunk_offset(4, kp, 0, kc, lane);
      for (int e = 0; e < 32; ++e) {
        const tiled::Pos pos = tiled::w4_code_pos(lane, e / 8, e % 8);
        const int64_t pc = kc * 64 + pos.k;
        if (perm[pc] >= 0) continue;
        ++padded;
        const uint8_t b = chunk[4 * (e / 8) + (e % 8) / 2];
        const int q = (e % 8) % 2 ? b >> 4 : b & 15;
        EXPECT_EQ(q, w.zeros[static_cast<size_t>(pos.n * w.groups() + group_of[pc / 64])]);
      }
    }
  EXPECT_GT(padded, 0);
}

TEST(pack_tiled, refuses_what_the_layout_cannot_hold) {
  EXPECT_FALSE(tiled_layout_supports(make_format(3, 128, ZeroPoint::kSymmetric, DType::kF16), 64, 128).ok());
  EXPECT_FALSE(tiled_layout_supports(make_format(4, 128, ZeroPoint::kFloat, DType::kF16), 64, 128).ok());
  EXPECT_FALSE(tiled_layout_supports(make_format(4, 128, ZeroPoint::kSymmetric, DType::kF32), 64, 128).ok());
  const Status s = tiled_layout_supports(make_format(4, 64, ZeroPoint::kSymmetric, DType::kF16), 24, 128);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("N=24"), std::string::npos) << s.message();
  const Status t = tiled_layout_supports(make_format(4, 32, ZeroPoint::kSymmetric, DType::kF16), 64, 96);
  EXPECT_NE(t.message().find("K=96"), std::string::npos) << t.message();
  EXPECT_TRUE(tiled_layout_supports(make_format(8, 0, ZeroPoint::kInteger, DType::kBF16), 16, 64).ok());
}

}  // namespace
