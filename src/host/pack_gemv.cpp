// Host packer of the gemv layout (include/lowbit/pack_gemv.hpp, docs/kernels/gemv.md).
// The geometry and the bit positions come from cuda/gemv/smxx_gemv_layout.hpp, the header
// the kernels decode with, so the packer and the decoders cannot disagree.
#include "lowbit/pack_gemv.hpp"

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/parallel.hpp"
#include "cuda/gemv/smxx_gemv_layout.hpp"
#include "lowbit/numeric.hpp"

namespace lowbit {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Where each code of a lane's (tile, chunk) share goes, for one width: per lane, register
// and half the (row, column) inside the block; per register and bit the (word, bit).
struct LaneMap {
  std::array<std::array<gemv::CodePos, 2>, gemv::kRegsPerChunk> pos[gemv::kLanes];
  std::array<std::array<gemv::BitPos, 8>, gemv::kRegsPerChunk> bit;
};

const LaneMap& lane_map(int bits) {
  static const std::array<LaneMap, 9> maps = [] {
    std::array<LaneMap, 9> m{};
    for (int b = 1; b <= 8; ++b) {
      if (!gemv::layout_bits_supported(b)) continue;
      for (int lane = 0; lane < gemv::kLanes; ++lane)
        for (int r = 0; r < gemv::kRegsPerChunk; ++r)
          for (int h = 0; h < 2; ++h) m[b].pos[lane][r][h] = gemv::code_pos(lane, r, h);
      for (int r = 0; r < gemv::kRegsPerChunk; ++r)
        for (int j = 0; j < b; ++j) m[b].bit[r][j] = gemv::code_bit(b, r, j);
    }
    return m;
  }();
  return maps[bits];
}

// Byte offset of word `word` (0 .. 4 bits - 1) of lane `lane` in block (tile, chunk).
int64_t word_offset(int bits, int64_t chunks, int64_t tile, int64_t chunk, int lane, int word) {
  return ((tile * chunks + chunk) * bits + word / 4) * gemv::kSliceBytes + lane * 16 + (word % 4) * 4;
}

}  // namespace

std::string gemv_layout_name(int bits) { return "gemv_w" + std::to_string(bits) + "_v1"; }

Status gemv_layout_supports(const IntWeightFormat& f, int64_t n, int64_t k) {
  const std::string fmt = " (" + f.name() + ", gemv layout)";
  if (!gemv::layout_bits_supported(f.bits))
    return Status::Fail("lowbit: weight bits=" + std::to_string(f.bits) + " is not 1, 2, 3, 4, 5, 6 or 8" + fmt);
  if (f.group_size != 0 && f.group_size != 32 && f.group_size != 64 && f.group_size != 128)
    return Status::Fail("lowbit: group_size=" + std::to_string(f.group_size) +
                        " is not 32, 64, 128 or per-channel" + fmt);
  if (f.scale_dtype != DType::kF16 && f.scale_dtype != DType::kBF16)
    return Status::Fail(std::string("lowbit: scale dtype ") + dtype_name(f.scale_dtype) + " is not f16 or bf16" + fmt);
  if (f.act_order) return Status::Fail("lowbit: act-order weights are not held by the gemv layout" + fmt);
  if (n <= 0) return Status::Fail("lowbit: weight N=" + std::to_string(n) + " is not positive" + fmt);
  if (k <= 0 || k % 32 != 0)
    return Status::Fail("lowbit: weight K=" + std::to_string(k) + " is not a positive multiple of 32" + fmt);
  if (f.group_size > 0 && k % f.group_size != 0)
    return Status::Fail("lowbit: weight K=" + std::to_string(k) + " is not a multiple of group_size=" +
                        std::to_string(f.group_size) + fmt);
  if (n > (int64_t{1} << 30) || k > (int64_t{1} << 28))
    return Status::Fail("lowbit: weight shape (" + std::to_string(n) + ", " + std::to_string(k) +
                        ") exceeds 2^30 x 2^28" + fmt);
  return Status::Ok();
}

GemvLayoutGeometry gemv_layout_geometry(const IntWeightFormat& f, int64_t n, int64_t k) {
  GemvLayoutGeometry g;
  g.tiles = ceil_div(n, gemv::kTileRows);
  g.chunks = ceil_div(k, gemv::kChunkK);
  g.slots = gemv::scale_slots(f.group_size);
  g.data_bytes = static_cast<std::size_t>(g.tiles * g.chunks * f.bits * gemv::kSliceBytes);
  const int64_t entries = f.group_size == 0 ? g.tiles * gemv::kEntriesPerSlot
                                            : g.tiles * g.chunks * g.slots * gemv::kEntriesPerSlot;
  g.scale_bytes = static_cast<std::size_t>(entries) * 4;
  return g;
}

PackedWeight pack_gemv(const IntWeight& w) {
  const IntWeightFormat& f = w.format;
  throw_if_error(gemv_layout_supports(f, w.n, w.k));
  throw_if_error(w.validate());
  const int bits = f.bits;
  const int64_t n = w.n, k = w.k, groups = w.groups();
  const GemvLayoutGeometry geo = gemv_layout_geometry(f, n, k);
  const LaneMap& map = lane_map(bits);

  PackedWeight out;
  out.layout = gemv_layout_name(bits);
  out.format = WeightFormat::integer(f);
  out.n = n;
  out.k = k;
  out.data.assign(geo.data_bytes, 0);

  // Codes: padded rows and columns stay 0 (their activations or outputs never count).
  // Tiles are independent: one thread per range of tiles.
  detail::parallel_for(0, geo.tiles, 0, [&](int64_t tile_begin, int64_t tile_end) {
  uint32_t words[4 * 8];
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    for (int64_t chunk = 0; chunk < geo.chunks; ++chunk) {
      for (int lane = 0; lane < gemv::kLanes; ++lane) {
        std::memset(words, 0, sizeof(words));
        for (int r = 0; r < gemv::kRegsPerChunk; ++r) {
          for (int h = 0; h < 2; ++h) {
            const gemv::CodePos cp = map.pos[lane][r][h];
            const int64_t row = tile * gemv::kTileRows + cp.row;
            const int64_t col = chunk * gemv::kChunkK + cp.col;
            if (row >= n || col >= k) continue;
            const uint32_t q = w.codes[static_cast<std::size_t>(row * k + col)];
            for (int j = 0; j < bits; ++j) {
              if (((q >> j) & 1u) == 0) continue;
              const gemv::BitPos bp = map.bit[r][j];
              words[bp.word] |= 1u << (bp.bit + 16 * h);
            }
          }
        }
        for (int wi = 0; wi < 4 * bits; ++wi)
          std::memcpy(out.data.data() + word_offset(bits, geo.chunks, tile, chunk, lane, wi), &words[wi], 4);
      }
    }
  }
  }, 16);

  // Scales and zero points: entry = (row g, row g + 8) of the tile, in the scale dtype.
  const bool zeros = f.zero != ZeroPoint::kSymmetric;
  out.scales.assign(geo.scale_bytes, 0);
  if (zeros) out.zeros.assign(geo.scale_bytes, 0);
  auto put = [&](std::vector<uint8_t>& buf, int64_t entry, int half, float v) {
    store_from_f32(buf.data(), f.scale_dtype, 2 * entry + half, v);
  };
  const int slots = geo.slots;
  for (int64_t tile = 0; tile < geo.tiles; ++tile) {
    for (int64_t chunk = 0; chunk < (f.group_size == 0 ? 1 : geo.chunks); ++chunk) {
      for (int s = 0; s < slots; ++s) {
        const int64_t group = f.group_size == 0 ? 0 : chunk * slots + s;
        if (group >= groups) continue;
        for (int g = 0; g < gemv::kEntriesPerSlot; ++g) {
          const int64_t entry = ((tile * (f.group_size == 0 ? 1 : geo.chunks) + chunk) * slots + s) *
                                    gemv::kEntriesPerSlot + g;
          for (int h = 0; h < 2; ++h) {
            const int64_t row = tile * gemv::kTileRows + g + 8 * h;
            if (row >= n) continue;
            const std::size_t i = static_cast<std::size_t>(row * groups + group);
            put(out.scales, entry, h, w.scales[i]);
            if (zeros) put(out.zeros, entry, h, w.zero_of(row, group));
          }
        }
      }
    }
  }
  return out;
}

IntWeight unpack_gemv(const PackedWeight& p) {
  if (p.format.kind != WeightKind::kInt)
    throw Error("lowbit: unpack_gemv: packed weight is " + p.format.name() + ", not an integer weight");
  const IntWeightFormat& f = p.format.int_format;
  throw_if_error(gemv_layout_supports(f, p.n, p.k));
  if (p.layout != gemv_layout_name(f.bits))
    throw Error("lowbit: unpack_gemv: layout is " + p.layout + ", not " + gemv_layout_name(f.bits));
  const GemvLayoutGeometry geo = gemv_layout_geometry(f, p.n, p.k);
  const bool zeros = f.zero != ZeroPoint::kSymmetric;
  if (p.data.size() != geo.data_bytes || p.scales.size() != geo.scale_bytes ||
      p.zeros.size() != (zeros ? geo.scale_bytes : 0))
    throw Error("lowbit: unpack_gemv: buffer sizes do not match the gemv layout of " + f.name() + " (" +
                std::to_string(p.n) + ", " + std::to_string(p.k) + ")");

  IntWeight w;
  w.format = f;
  w.n = p.n;
  w.k = p.k;
  const int bits = f.bits;
  const int64_t n = p.n, k = p.k, groups = f.group_size == 0 ? 1 : k / f.group_size;
  w.codes.assign(static_cast<std::size_t>(n * k), 0);
  const LaneMap& map = lane_map(bits);
  uint32_t words[4 * 8];
  for (int64_t tile = 0; tile < geo.tiles; ++tile) {
    for (int64_t chunk = 0; chunk < geo.chunks; ++chunk) {
      for (int lane = 0; lane < gemv::kLanes; ++lane) {
        for (int wi = 0; wi < 4 * bits; ++wi)
          std::memcpy(&words[wi], p.data.data() + word_offset(bits, geo.chunks, tile, chunk, lane, wi), 4);
        for (int r = 0; r < gemv::kRegsPerChunk; ++r) {
          for (int h = 0; h < 2; ++h) {
            const gemv::CodePos cp = map.pos[lane][r][h];
            const int64_t row = tile * gemv::kTileRows + cp.row;
            const int64_t col = chunk * gemv::kChunkK + cp.col;
            if (row >= n || col >= k) continue;
            uint32_t q = 0;
            for (int j = 0; j < bits; ++j) {
              const gemv::BitPos bp = map.bit[r][j];
              q |= ((words[bp.word] >> (bp.bit + 16 * h)) & 1u) << j;
            }
            w.codes[static_cast<std::size_t>(row * k + col)] = static_cast<uint8_t>(q);
          }
        }
      }
    }
  }
  w.scales.assign(static_cast<std::size_t>(n * groups), 0.0f);
  if (f.zero == ZeroPoint::kInteger) w.zeros.assign(static_cast<std::size_t>(n * groups), 0);
  if (f.zero == ZeroPoint::kFloat) w.zeros_f.assign(static_cast<std::size_t>(n * groups), 0.0f);
  const int64_t chunks_s = f.group_size == 0 ? 1 : geo.chunks;
  for (int64_t row = 0; row < n; ++row) {
    const int64_t tile = row / gemv::kTileRows, g = row % 8, h = (row % gemv::kTileRows) / 8;
    for (int64_t group = 0; group < groups; ++group) {
      const int64_t chunk = f.group_size == 0 ? 0 : group / geo.slots;
      const int64_t s = f.group_size == 0 ? 0 : group % geo.slots;
      const int64_t entry = ((tile * chunks_s + chunk) * geo.slots + s) * gemv::kEntriesPerSlot + g;
      const std::size_t i = static_cast<std::size_t>(row * groups + group);
      w.scales[i] = load_as_f32(p.scales.data(), f.scale_dtype, 2 * entry + h);
      if (f.zero == ZeroPoint::kInteger)
        w.zeros[i] = static_cast<uint8_t>(load_as_f32(p.zeros.data(), f.scale_dtype, 2 * entry + h));
      if (f.zero == ZeroPoint::kFloat) w.zeros_f[i] = load_as_f32(p.zeros.data(), f.scale_dtype, 2 * entry + h);
    }
  }
  return w;
}

}  // namespace lowbit
