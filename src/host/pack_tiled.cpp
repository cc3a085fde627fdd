// Host packer of the tiled layout (include/lowbit/pack.hpp, docs/kernels/mixed_gemm.md).
// The geometry comes from cuda/dequant/smxx_tiled_layout.hpp, the same header the kernels
// read, so the packer and the decoders cannot disagree on where a code lives.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "cuda/dequant/smxx_tiled_layout.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/pack.hpp"

namespace lowbit {

namespace {

std::string shape_text(int64_t n, int64_t k) {
  return "(" + std::to_string(n) + ", " + std::to_string(k) + ")";
}

// Position of code `e` of lane `lane`'s 16 bytes: e = word * 8 + nibble (4-bit) or
// word * 4 + byte (8-bit).
tiled::Pos code_pos(int bits, int lane, int e) {
  return bits == 4 ? tiled::w4_code_pos(lane, e / 8, e % 8) : tiled::w8_code_pos(lane, e / 4, e % 4);
}

void put_code(uint8_t* chunk16, int bits, int e, uint32_t q) {
  if (bits == 8) {
    chunk16[e] = static_cast<uint8_t>(q);  // word w byte b is byte 4w + b (little endian)
  } else {
    // nibble i of word w: bits 4i.. of the little-endian word = byte 4w + i/2, high nibble
    // when i is odd.
    const int word = e / 8, nib = e % 8;
    uint8_t& b = chunk16[4 * word + nib / 2];
    b = static_cast<uint8_t>(nib % 2 ? (b & 0x0F) | (q << 4) : (b & 0xF0) | q);
  }
}

uint32_t get_code(const uint8_t* chunk16, int bits, int e) {
  if (bits == 8) return chunk16[e];
  const int word = e / 8, nib = e % 8;
  const uint8_t b = chunk16[4 * word + nib / 2];
  return nib % 2 ? b >> 4 : b & 0x0F;
}

}  // namespace

std::string tiled_layout_name(int bits) { return "tiled_w" + std::to_string(bits) + "_v1"; }

Status tiled_layout_supports(const IntWeightFormat& f, int64_t n, int64_t k) {
  const std::string fmt = " (" + f.name() + ", tiled layout)";
  if (f.bits != 4 && f.bits != 8)
    return Status::Fail("lowbit: weight bits=" + std::to_string(f.bits) + " is not 4 or 8" + fmt);
  if (f.zero == ZeroPoint::kFloat)
    return Status::Fail("lowbit: float zero points are not held by the tiled layout, only "
                        "symmetric or integer zero points" + fmt);
  if (f.group_size != 0 && f.group_size != 32 && f.group_size != 64 && f.group_size != 128)
    return Status::Fail("lowbit: group_size=" + std::to_string(f.group_size) +
                        " is not 32, 64, 128 or per-channel" + fmt);
  if (f.scale_dtype != DType::kF16 && f.scale_dtype != DType::kBF16)
    return Status::Fail(std::string("lowbit: scale dtype ") + dtype_name(f.scale_dtype) +
                        " is not f16 or bf16" + fmt);
  if (f.act_order && f.group_size == 0)
    return Status::Fail("lowbit: act-order needs a group size" + fmt);
  if (n <= 0 || n % 16 != 0)
    return Status::Fail("lowbit: weight N=" + std::to_string(n) + " is not a positive multiple of 16" + fmt);
  if (k <= 0 || k % 64 != 0)
    return Status::Fail("lowbit: weight K=" + std::to_string(k) + " is not a positive multiple of 64" + fmt);
  if (f.group_size > 0 && k % f.group_size != 0)
    return Status::Fail("lowbit: weight K=" + std::to_string(k) + " is not a multiple of group_size=" +
                        std::to_string(f.group_size) + fmt);
  if (n > (int64_t{1} << 30) || k > (int64_t{1} << 29))
    return Status::Fail("lowbit: weight shape " + shape_text(n, k) + " exceeds 2^30 x 2^29" + fmt);
  return Status::Ok();
}

std::vector<int32_t> TiledActOrder::index_buffer() const {
  std::vector<int32_t> idx(tiled::kActOrderHeader + perm.size() + group_of.size(), 0);
  idx[0] = static_cast<int32_t>(k_packed);
  idx[1] = static_cast<int32_t>(groups_packed);
  std::copy(perm.begin(), perm.end(), idx.begin() + tiled::kActOrderHeader);
  std::copy(group_of.begin(), group_of.end(), idx.begin() + tiled::kActOrderHeader + static_cast<long>(perm.size()));
  return idx;
}

TiledActOrder plan_tiled_act_order(const int32_t* g_idx, int64_t k, int group_size) {
  if (group_size <= 0 || k % group_size != 0)
    throw Error("lowbit: act-order needs k=" + std::to_string(k) + " to be a multiple of group_size=" +
                std::to_string(group_size));
  const int64_t groups = k / group_size;
  std::vector<std::vector<int32_t>> members(static_cast<size_t>(groups));
  for (int64_t c = 0; c < k; ++c) {
    const int32_t g = g_idx[c];
    if (g < 0 || g >= groups)
      throw Error("lowbit: g_idx[" + std::to_string(c) + "]=" + std::to_string(g) + " is outside [0, " +
                  std::to_string(groups) + ")");
    members[static_cast<size_t>(g)].push_back(static_cast<int32_t>(c));  // ascending: stable
  }
  TiledActOrder plan;
  plan.uniform = std::all_of(members.begin(), members.end(),
                             [&](const std::vector<int32_t>& m) { return static_cast<int64_t>(m.size()) == group_size; });
  for (int64_t g = 0; g < groups; ++g) {
    const auto& m = members[static_cast<size_t>(g)];
    for (size_t start = 0; start < m.size(); start += static_cast<size_t>(group_size)) {
      for (int i = 0; i < group_size; ++i) {
        const size_t j = start + static_cast<size_t>(i);
        plan.perm.push_back(j < m.size() ? m[j] : -1);
      }
      plan.group_of.push_back(static_cast<int32_t>(g));
    }
  }
  while (plan.perm.size() % 64 != 0) {  // k' must be whole 64-column blocks (group 32 only)
    plan.perm.insert(plan.perm.end(), static_cast<size_t>(group_size), -1);
    plan.group_of.push_back(0);
  }
  plan.k_packed = static_cast<int64_t>(plan.perm.size());
  plan.groups_packed = static_cast<int64_t>(plan.group_of.size());
  return plan;
}

PackedWeight pack_tiled(const IntWeight& w) {
  const IntWeightFormat& f = w.format;
  throw_if_error(tiled_layout_supports(f, w.n, w.k));
  throw_if_error(w.validate());
  const int bits = f.bits;
  const int64_t n = w.n, k = w.k, groups = w.groups();
  const int gs = f.group_size;
  const bool int_zero = f.zero == ZeroPoint::kInteger;

  TiledActOrder plan;
  if (f.act_order) plan = plan_tiled_act_order(w.g_idx.data(), k, gs);
  const int64_t kp = f.act_order ? plan.k_packed : k;
  const int64_t gp = f.act_order ? plan.groups_packed : groups;
  // Original group of packed group pg.
  auto source_group = [&](int64_t pg) -> int64_t { return f.act_order ? plan.group_of[static_cast<size_t>(pg)] : pg; };
  auto packed_group = [&](int64_t pc) -> int64_t { return gs == 0 ? 0 : pc / gs; };

  PackedWeight out;
  out.layout = tiled_layout_name(bits);
  out.format = WeightFormat::integer(f);
  out.n = n;
  out.k = k;
  out.data.assign(static_cast<size_t>(n * kp * bits / 8), 0);

  const int ck = tiled::chunk_k(bits);
  const int codes_per_lane = 128 / bits;  // 32 nibbles or 16 bytes
  for (int64_t strip = 0; strip < n / 16; ++strip) {
    for (int64_t kc = 0; kc < kp / ck; ++kc) {
      for (int lane = 0; lane < tiled::kLanes; ++lane) {
        uint8_t* chunk = out.data.data() + tiled::chunk_offset(bits, kp, strip, kc, lane);
        for (int e = 0; e < codes_per_lane; ++e) {
          const tiled::Pos pos = code_pos(bits, lane, e);
          const int64_t row = strip * 16 + pos.n;
          const int64_t pcol = kc * ck + pos.k;
          const int64_t col = f.act_order ? plan.perm[static_cast<size_t>(pcol)] : pcol;
          uint32_t q;
          if (col >= 0) {
            q = w.codes[static_cast<size_t>(row * k + col)];
          } else {  // padding column: the code of the zero point, so the weight is exactly 0
            const int64_t g = source_group(packed_group(pcol));
            q = int_zero ? w.zeros[static_cast<size_t>(row * groups + g)] : static_cast<uint32_t>(f.symmetric_zero());
          }
          put_code(chunk, bits, e, q);
        }
      }
    }
  }

  const size_t ssize = dtype_size(f.scale_dtype);
  out.scales.assign(static_cast<size_t>(gp * n) * ssize, 0);
  if (int_zero) out.zeros.assign(static_cast<size_t>(gp * n), 0);
  for (int64_t pg = 0; pg < gp; ++pg) {
    const int64_t g = source_group(pg);
    for (int64_t row = 0; row < n; ++row) {
      const int64_t dst = tiled::scale_index(n, pg, row);
      store_from_f32(out.scales.data(), f.scale_dtype, dst, w.scales[static_cast<size_t>(row * groups + g)]);
      if (int_zero) out.zeros[static_cast<size_t>(dst)] = w.zeros[static_cast<size_t>(row * groups + g)];
    }
  }

  if (f.act_order) {
    const std::vector<int32_t> idx = plan.index_buffer();
    out.index.resize(idx.size() * sizeof(int32_t));
    std::memcpy(out.index.data(), idx.data(), out.index.size());
  }
  return out;
}

IntWeight unpack_tiled(const PackedWeight& p) {
  if (p.format.kind != WeightKind::kInt)
    throw Error("lowbit: unpack_tiled: weight format " + p.format.name() + " is not an integer format");
  const IntWeightFormat& f = p.format.int_format;
  throw_if_error(tiled_layout_supports(f, p.n, p.k));
  if (p.layout != tiled_layout_name(f.bits))
    throw Error("lowbit: unpack_tiled: layout " + p.layout + " is not " + tiled_layout_name(f.bits));
  const int bits = f.bits;
  const int64_t n = p.n, k = p.k;
  const int gs = f.group_size;

  IntWeight w;
  w.format = f;
  w.n = n;
  w.k = k;
  const int64_t groups = w.groups();
  int64_t kp = k, gp = groups;
  const int32_t* perm = nullptr;
  const int32_t* group_of = nullptr;
  if (f.act_order) {
    const size_t words = p.index.size() / sizeof(int32_t);
    const int32_t* hdr = reinterpret_cast<const int32_t*>(p.index.data());
    if (words < static_cast<size_t>(tiled::kActOrderHeader) ||
        words != tiled::kActOrderHeader + static_cast<size_t>(hdr[0]) + static_cast<size_t>(hdr[1]))
      throw Error("lowbit: unpack_tiled: act-order index buffer of " + std::to_string(words) +
                  " int32 does not match its header");
    kp = hdr[0];
    gp = hdr[1];
    perm = hdr + tiled::kActOrderHeader;
    group_of = perm + kp;
    w.g_idx.assign(static_cast<size_t>(k), 0);
  }
  const size_t ssize = dtype_size(f.scale_dtype);
  const bool int_zero = f.zero == ZeroPoint::kInteger;
  if (p.data.size() != static_cast<size_t>(n * kp * bits / 8) ||
      p.scales.size() != static_cast<size_t>(gp * n) * ssize ||
      p.zeros.size() != (int_zero ? static_cast<size_t>(gp * n) : size_t{0}))
    throw Error("lowbit: unpack_tiled: buffer sizes do not match the weight " + shape_text(n, k) +
                " of " + f.name());

  w.codes.assign(static_cast<size_t>(n * k), 0);
  // Groups that own no column (possible with act-order) keep scale 0 and zero point 0:
  // nothing of them survives packing.
  w.scales.assign(static_cast<size_t>(n * groups), 0.f);
  if (int_zero) w.zeros.assign(static_cast<size_t>(n * groups), 0);

  const int ck = tiled::chunk_k(bits);
  for (int64_t strip = 0; strip < n / 16; ++strip)
    for (int64_t kc = 0; kc < kp / ck; ++kc)
      for (int lane = 0; lane < tiled::kLanes; ++lane) {
        const uint8_t* chunk = p.data.data() + tiled::chunk_offset(bits, kp, strip, kc, lane);
        for (int e = 0; e < 128 / bits; ++e) {
          const tiled::Pos pos = code_pos(bits, lane, e);
          const int64_t pcol = kc * ck + pos.k;
          const int64_t col = perm ? perm[pcol] : pcol;
          if (col < 0) continue;
          w.codes[static_cast<size_t>((strip * 16 + pos.n) * k + col)] =
              static_cast<uint8_t>(get_code(chunk, bits, e));
        }
      }
  if (f.act_order)
    for (int64_t j = 0; j < kp; ++j)
      if (perm[j] >= 0) w.g_idx[static_cast<size_t>(perm[j])] = group_of[j / gs];
  for (int64_t pg = 0; pg < gp; ++pg) {
    const int64_t g = f.act_order ? group_of[pg] : pg;
    for (int64_t row = 0; row < n; ++row) {
      const int64_t src = tiled::scale_index(n, pg, row);
      w.scales[static_cast<size_t>(row * groups + g)] = load_as_f32(p.scales.data(), f.scale_dtype, src);
      if (int_zero) w.zeros[static_cast<size_t>(row * groups + g)] = p.zeros[static_cast<size_t>(src)];
    }
  }
  throw_if_error(w.validate());
  return w;
}

#if !defined(LOWBIT_WITH_CUDA)
Status repack_tiled_on_device(const DeviceRepackArgs&, Stream) {
  return Status::Fail("lowbit: repack_tiled_on_device: this build has no CUDA backend");
}
#endif

}  // namespace lowbit
