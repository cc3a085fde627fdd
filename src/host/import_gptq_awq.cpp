// GPTQ / AWQ checkpoint tensors <-> canonical IntWeight (include/lowbit/import.hpp states
// the conventions).
#include <string>

#include "lowbit/import.hpp"
#include "lowbit/status.hpp"

namespace lowbit {

namespace {

int64_t groups_of(int group_size, int64_t k) { return group_size <= 0 ? 1 : k / group_size; }

void require(bool ok, const std::string& what) {
  if (!ok) throw Error("lowbit: " + what);
}

void check_target(const IntWeightFormat& target, int bits, int group_size, int64_t n, int64_t k,
                  const char* who) {
  const std::string w = std::string(who) + ": ";
  require(target.bits == bits, w + "checkpoint bits=" + std::to_string(bits) + " but target format " +
                                   target.name() + " has bits=" + std::to_string(target.bits));
  const int gs = group_size <= 0 ? 0 : group_size;
  require(target.group_size == gs, w + "checkpoint group_size=" + std::to_string(group_size) +
                                       " but target format " + target.name() + " has group_size=" +
                                       std::to_string(target.group_size));
  require(target.zero != ZeroPoint::kFloat, w + "target format " + target.name() + " has float zeros");
  require(n > 0 && k > 0, w + "shape (" + std::to_string(n) + ", " + std::to_string(k) + ") is empty");
  if (gs > 0) require(k % gs == 0, w + "k=" + std::to_string(k) + " is not a multiple of group_size=" + std::to_string(gs));
}

uint32_t field(int32_t word, int index, int bits) {
  return (static_cast<uint32_t>(word) >> (index * bits)) & ((1u << bits) - 1);
}

void set_field(int32_t& word, int index, int bits, uint32_t v) {
  uint32_t u = static_cast<uint32_t>(word);
  u |= (v & ((1u << bits) - 1)) << (index * bits);
  word = static_cast<int32_t>(u);
}

// Stores z (per (row, group)) into `w` according to the target's zero kind.
void set_zero(IntWeight& w, int64_t row, int64_t g, int64_t groups, uint32_t z, const char* who) {
  if (w.format.zero == ZeroPoint::kSymmetric) {
    require(z == static_cast<uint32_t>(w.format.symmetric_zero()),
            std::string(who) + ": zero point " + std::to_string(z) + " of row " + std::to_string(row) +
                ", group " + std::to_string(g) + " is not " + std::to_string(w.format.symmetric_zero()) +
                " (target " + w.format.name() + " is symmetric)");
  } else {
    w.zeros[static_cast<size_t>(row * groups + g)] = static_cast<uint8_t>(z);
  }
}

}  // namespace

IntWeight import_gptq(const GptqTensors& t, GptqZeros zeros, const IntWeightFormat& target) {
  require(t.bits == 4 || t.bits == 8, "import_gptq: bits=" + std::to_string(t.bits) + " is not 4 or 8");
  check_target(target, t.bits, t.group_size, t.n, t.k, "import_gptq");
  const int p = 32 / t.bits;
  const int64_t groups = groups_of(t.group_size, t.k);
  require(t.k % p == 0 && t.n % p == 0, "import_gptq: n and k must be multiples of " + std::to_string(p));
  require(t.qweight.size() == static_cast<size_t>(t.k / p * t.n),
          "import_gptq: qweight has " + std::to_string(t.qweight.size()) + " int32, expected (k/" +
              std::to_string(p) + ") * n = " + std::to_string(t.k / p * t.n));
  require(t.qzeros.size() == static_cast<size_t>(groups * (t.n / p)),
          "import_gptq: qzeros has " + std::to_string(t.qzeros.size()) + " int32, expected groups * n/" +
              std::to_string(p) + " = " + std::to_string(groups * (t.n / p)));
  require(t.scales.size() == static_cast<size_t>(groups * t.n),
          "import_gptq: scales has " + std::to_string(t.scales.size()) + " values, expected groups * n = " +
              std::to_string(groups * t.n));

  IntWeight w;
  w.format = target;
  w.n = t.n;
  w.k = t.k;
  w.codes.resize(static_cast<size_t>(t.n * t.k));
  w.scales.resize(static_cast<size_t>(t.n * groups));
  if (target.zero == ZeroPoint::kInteger) w.zeros.resize(static_cast<size_t>(t.n * groups));

  for (int64_t kk = 0; kk < t.k; ++kk)
    for (int64_t n = 0; n < t.n; ++n)
      w.codes[static_cast<size_t>(n * t.k + kk)] =
          static_cast<uint8_t>(field(t.qweight[static_cast<size_t>(kk / p * t.n + n)], static_cast<int>(kk % p), t.bits));

  const uint32_t max_code = (1u << t.bits) - 1;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t n = 0; n < t.n; ++n) {
      const uint32_t stored = field(t.qzeros[static_cast<size_t>(g * (t.n / p) + n / p)], static_cast<int>(n % p), t.bits);
      const uint32_t z = zeros == GptqZeros::kV1 ? stored + 1 : stored;
      require(z <= max_code, "import_gptq: qzeros of row " + std::to_string(n) + ", group " + std::to_string(g) +
                                 " stores " + std::to_string(stored) + ", i.e. zero point " + std::to_string(z) +
                                 " (v1 adds 1), outside [0, " + std::to_string(max_code) + "]");
      set_zero(w, n, g, groups, z, "import_gptq");
      w.scales[static_cast<size_t>(n * groups + g)] = t.scales[static_cast<size_t>(g * t.n + n)];
    }

  if (!t.g_idx.empty()) {
    require(t.g_idx.size() == static_cast<size_t>(t.k),
            "import_gptq: g_idx has " + std::to_string(t.g_idx.size()) + " entries, expected k = " + std::to_string(t.k));
    bool trivial = true;
    for (int64_t kk = 0; kk < t.k; ++kk)
      trivial = trivial && (t.group_size <= 0 ? t.g_idx[static_cast<size_t>(kk)] == 0
                                              : t.g_idx[static_cast<size_t>(kk)] == kk / t.group_size);
    if (target.act_order) {
      w.g_idx = t.g_idx;
    } else {
      require(trivial, "import_gptq: g_idx is not k / group_size (act-order checkpoint) but target " +
                           target.name() + " has no act-order");
    }
  } else {
    require(!target.act_order, "import_gptq: target " + target.name() + " needs g_idx");
  }
  throw_if_error(w.validate());
  return w;
}

GptqTensors export_gptq(const IntWeight& w, GptqZeros zeros) {
  const IntWeightFormat& f = w.format;
  require(f.bits == 4 || f.bits == 8, "export_gptq: bits=" + std::to_string(f.bits) + " is not 4 or 8");
  require(f.zero != ZeroPoint::kFloat, "export_gptq: float zero points have no GPTQ form");
  const int p = 32 / f.bits;
  require(w.n % p == 0 && w.k % p == 0, "export_gptq: n and k must be multiples of " + std::to_string(p));
  const int64_t groups = w.groups();
  GptqTensors t;
  t.bits = f.bits;
  t.group_size = f.group_size == 0 ? -1 : f.group_size;
  t.n = w.n;
  t.k = w.k;
  t.qweight.assign(static_cast<size_t>(w.k / p * w.n), 0);
  t.qzeros.assign(static_cast<size_t>(groups * (w.n / p)), 0);
  t.scales.resize(static_cast<size_t>(groups * w.n));
  for (int64_t kk = 0; kk < w.k; ++kk)
    for (int64_t n = 0; n < w.n; ++n)
      set_field(t.qweight[static_cast<size_t>(kk / p * w.n + n)], static_cast<int>(kk % p), f.bits,
                w.codes[static_cast<size_t>(n * w.k + kk)]);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t n = 0; n < w.n; ++n) {
      const uint32_t z = f.zero == ZeroPoint::kInteger ? w.zeros[static_cast<size_t>(n * groups + g)]
                                                      : static_cast<uint32_t>(f.symmetric_zero());
      require(zeros == GptqZeros::kV2 || z >= 1,
              "export_gptq: zero point 0 (row " + std::to_string(n) + ", group " + std::to_string(g) +
                  ") has no v1 form (v1 stores z - 1)");
      set_field(t.qzeros[static_cast<size_t>(g * (w.n / p) + n / p)], static_cast<int>(n % p), f.bits,
                zeros == GptqZeros::kV1 ? z - 1 : z);
      t.scales[static_cast<size_t>(g * w.n + n)] = w.scales[static_cast<size_t>(n * groups + g)];
    }
  if (f.act_order) t.g_idx = w.g_idx;
  return t;
}

IntWeight import_awq(const AwqTensors& t, const IntWeightFormat& target) {
  require(t.bits == 4, "import_awq: bits=" + std::to_string(t.bits) + " (AWQ GEMM checkpoints are 4-bit)");
  check_target(target, t.bits, t.group_size, t.n, t.k, "import_awq");
  require(!target.act_order, "import_awq: AWQ has no act-order (target " + target.name() + ")");
  require(t.n % 8 == 0, "import_awq: n=" + std::to_string(t.n) + " is not a multiple of 8");
  const int64_t groups = groups_of(t.group_size, t.k);
  const int64_t cols = t.n / 8;
  require(t.qweight.size() == static_cast<size_t>(t.k * cols),
          "import_awq: qweight has " + std::to_string(t.qweight.size()) + " int32, expected k * n/8 = " +
              std::to_string(t.k * cols));
  require(t.qzeros.size() == static_cast<size_t>(groups * cols),
          "import_awq: qzeros has " + std::to_string(t.qzeros.size()) + " int32, expected groups * n/8 = " +
              std::to_string(groups * cols));
  require(t.scales.size() == static_cast<size_t>(groups * t.n),
          "import_awq: scales has " + std::to_string(t.scales.size()) + " values, expected groups * n = " +
              std::to_string(groups * t.n));
  IntWeight w;
  w.format = target;
  w.n = t.n;
  w.k = t.k;
  w.codes.resize(static_cast<size_t>(t.n * t.k));
  w.scales.resize(static_cast<size_t>(t.n * groups));
  if (target.zero == ZeroPoint::kInteger) w.zeros.resize(static_cast<size_t>(t.n * groups));
  for (int64_t kk = 0; kk < t.k; ++kk)
    for (int64_t c = 0; c < cols; ++c) {
      const int32_t word = t.qweight[static_cast<size_t>(kk * cols + c)];
      for (int i = 0; i < 8; ++i)
        w.codes[static_cast<size_t>((8 * c + kAwqOrder[i]) * t.k + kk)] = static_cast<uint8_t>(field(word, i, 4));
    }
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < cols; ++c) {
      const int32_t word = t.qzeros[static_cast<size_t>(g * cols + c)];
      for (int i = 0; i < 8; ++i) set_zero(w, 8 * c + kAwqOrder[i], g, groups, field(word, i, 4), "import_awq");
    }
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t n = 0; n < t.n; ++n)
      w.scales[static_cast<size_t>(n * groups + g)] = t.scales[static_cast<size_t>(g * t.n + n)];
  throw_if_error(w.validate());
  return w;
}

AwqTensors export_awq(const IntWeight& w) {
  const IntWeightFormat& f = w.format;
  require(f.bits == 4, "export_awq: bits=" + std::to_string(f.bits) + " (AWQ is 4-bit)");
  require(f.zero != ZeroPoint::kFloat, "export_awq: float zero points have no AWQ form");
  require(!f.act_order, "export_awq: AWQ has no act-order");
  require(w.n % 8 == 0, "export_awq: n=" + std::to_string(w.n) + " is not a multiple of 8");
  const int64_t groups = w.groups(), cols = w.n / 8;
  AwqTensors t;
  t.bits = 4;
  t.group_size = f.group_size == 0 ? -1 : f.group_size;
  t.n = w.n;
  t.k = w.k;
  t.qweight.assign(static_cast<size_t>(w.k * cols), 0);
  t.qzeros.assign(static_cast<size_t>(groups * cols), 0);
  t.scales.resize(static_cast<size_t>(groups * w.n));
  for (int64_t kk = 0; kk < w.k; ++kk)
    for (int64_t c = 0; c < cols; ++c)
      for (int i = 0; i < 8; ++i)
        set_field(t.qweight[static_cast<size_t>(kk * cols + c)], i, 4,
                  w.codes[static_cast<size_t>((8 * c + kAwqOrder[i]) * w.k + kk)]);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < cols; ++c)
      for (int i = 0; i < 8; ++i) {
        const int64_t n = 8 * c + kAwqOrder[i];
        const uint32_t z = f.zero == ZeroPoint::kInteger ? w.zeros[static_cast<size_t>(n * groups + g)]
                                                        : static_cast<uint32_t>(f.symmetric_zero());
        set_field(t.qzeros[static_cast<size_t>(g * cols + c)], i, 4, z);
      }
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t n = 0; n < w.n; ++n)
      t.scales[static_cast<size_t>(g * w.n + n)] = w.scales[static_cast<size_t>(n * groups + g)];
  return t;
}

}  // namespace lowbit
