// lowbit v1 checkpoints: bit-packing, and write -> read round trips of every format family,
// plus the checks load_quantized() makes on files that break the convention.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "lowbit/checkpoint.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/status.hpp"

namespace lowbit {
namespace {

std::string tmp_path(const std::string& name) {
  std::filesystem::create_directories(LOWBIT_TEST_TMP_DIR);
  return std::string(LOWBIT_TEST_TMP_DIR) + "/checkpoint_" + name;
}

std::mt19937& rng() {
  static std::mt19937 g(std::random_device{}());
  return g;
}

int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }

// A random IntWeight that satisfies validate(): codes, zeros and scales in range, scales
// exactly representable in the scale dtype.
IntWeight random_int_weight(const IntWeightFormat& f, int64_t n, int64_t k) {
  IntWeight w;
  w.format = f;
  w.n = n;
  w.k = k;
  const int64_t g = w.groups();
  w.codes.resize(static_cast<size_t>(n * k));
  for (auto& c : w.codes) c = static_cast<uint8_t>(uniform(0, f.max_code()));
  std::uniform_real_distribution<float> pos(0.001f, 2.0f), any(-8.0f, 8.0f);
  for (int64_t i = 0; i < n * g; ++i) {
    w.scales.push_back(round_to(f.scale_dtype, pos(rng())));
    if (f.zero == ZeroPoint::kInteger) w.zeros.push_back(static_cast<uint8_t>(uniform(0, f.max_code())));
    if (f.zero == ZeroPoint::kFloat) w.zeros_f.push_back(round_to(f.scale_dtype, any(rng())));
  }
  if (f.act_order)
    for (int64_t c = 0; c < k; ++c) w.g_idx.push_back(uniform(0, static_cast<int>(g) - 1));
  return w;
}

std::string case_name(const IntWeightFormat& f, int64_t n, int64_t k) {
  return f.name() + " " + dtype_name(f.scale_dtype) + " n=" + std::to_string(n) +
         " k=" + std::to_string(k);
}

// Expects load_quantized(file, name) to throw a one-line error containing `needle`.
void expect_load_error(const SafetensorsReader& r, const std::string& name,
                       const std::string& needle) {
  try {
    (void)load_quantized(r, name);
    ADD_FAILURE() << "no error, expected '" << needle << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find("tensor '" + name + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << "'" << needle << "' not in: " << msg;
  }
}

SafetensorsReader write_and_open(const SafetensorsWriter& w, const std::string& file) {
  const std::string path = tmp_path(file);
  w.write(path);
  return SafetensorsReader::open(path);
}

TEST(Checkpoint, BitPackRoundTripAllWidthsOddK) {
  for (int bits = 1; bits <= 8; ++bits) {
    for (int64_t k : {1, 7, 37, 129}) {
      const int64_t n = 3;
      std::vector<uint8_t> codes(static_cast<size_t>(n * k));
      for (auto& c : codes) c = static_cast<uint8_t>(uniform(0, (1 << bits) - 1));
      const auto packed = pack_codes_bitstream(codes, n, k, bits);
      EXPECT_EQ(packed.size(), static_cast<size_t>(n * ((k * bits + 7) / 8)))
          << "bits=" << bits << " k=" << k;
      EXPECT_EQ(unpack_codes_bitstream(packed.data(), n, k, bits), codes)
          << "bits=" << bits << " k=" << k;
    }
  }
}

TEST(Checkpoint, BitPackIsLsbFirst) {
  // bits=4: codes 1, 2, 3 -> 0x21, 0x03.
  EXPECT_EQ(pack_codes_bitstream({1, 2, 3}, 1, 3, 4), (std::vector<uint8_t>{0x21, 0x03}));
  // bits=3: 7 -> bits 0..2, 0 -> bits 3..5, 5 (0b101) -> bits 6..8: 0b01000111, 0b1.
  EXPECT_EQ(pack_codes_bitstream({7, 0, 5}, 1, 3, 3), (std::vector<uint8_t>{0x47, 0x01}));
  // Rows start on a byte boundary: bits=1, k=3, two rows.
  EXPECT_EQ(pack_codes_bitstream({1, 0, 1, 0, 1, 1}, 2, 3, 1), (std::vector<uint8_t>{0x05, 0x06}));
  EXPECT_THROW(pack_codes_bitstream({4}, 1, 1, 2), Error);     // code out of range
  EXPECT_THROW(pack_codes_bitstream({1, 2}, 1, 3, 4), Error);  // wrong count
  EXPECT_THROW(pack_codes_bitstream({1}, 1, 1, 9), Error);     // bits out of range
}

TEST(Checkpoint, IntWeightRoundTripEveryZeroModeAndActOrder) {
  const ZeroPoint zeros[] = {ZeroPoint::kSymmetric, ZeroPoint::kInteger, ZeroPoint::kFloat};
  const DType sdts[] = {DType::kF16, DType::kBF16, DType::kF32};
  struct Shape { int bits; int group; bool act; int64_t n, k; };
  const Shape shapes[] = {
      {4, 128, false, 5, 256}, {3, 64, false, 3, 192}, {8, 32, false, 2, 96},
      {4, 128, true, 4, 384},  {2, 32, true, 3, 64},   {1, 0, false, 3, 37},  // K*bits % 8 != 0
      {3, 0, false, 2, 11},    {4, 0, false, 1, 32},  {8, 0, false, 2, 17}, {5, 0, false, 2, 13}};
  SafetensorsWriter w;
  std::vector<std::pair<std::string, IntWeight>> written;
  int i = 0;
  for (const auto& s : shapes)
    for (ZeroPoint z : zeros) {
      IntWeightFormat f;
      f.bits = s.bits;
      f.group_size = s.group;
      f.zero = z;
      f.act_order = s.act;
      f.scale_dtype = sdts[i % 3];
      const std::string name = "model.layers." + std::to_string(i++) + ".mlp.up_proj.weight";
      IntWeight q = random_int_weight(f, s.n, s.k);
      ASSERT_TRUE(q.validate().ok()) << q.validate().message();
      add_int_weight(w, name, q);
      written.emplace_back(name, std::move(q));
    }
  const float plain[2] = {1.0f, 2.0f};
  w.add("model.norm.weight", DType::kF32, {2}, plain, sizeof(plain));
  const auto r = write_and_open(w, "int.safetensors");
  EXPECT_EQ(r.metadata().at(kCheckpointVersionKey), "1");
  const auto listed = list_quantized(r);
  EXPECT_EQ(listed.size(), written.size());
  EXPECT_EQ(listed.count("model.norm.weight"), 0u);
  for (const auto& [name, q] : written) {
    const std::string what = name + " " + case_name(q.format, q.n, q.k);
    EXPECT_EQ(listed.at(name), q.format.name()) << what;
    const auto& info = r.at(name + ".qweight");
    EXPECT_EQ(info.shape, (std::vector<int64_t>{q.n, (q.k * q.format.bits + 7) / 8})) << what;
    EXPECT_EQ(r.at(name + ".scales").dtype, q.format.scale_dtype) << what;
    const QuantizedTensor loaded = load_quantized(r, name);
    ASSERT_TRUE(std::holds_alternative<IntWeight>(loaded)) << what;
    const auto& got = std::get<IntWeight>(loaded);
    EXPECT_TRUE(got.format == q.format) << what << " loaded as " << got.format.name();
    EXPECT_EQ(got.n, q.n) << what;
    EXPECT_EQ(got.k, q.k) << what;
    EXPECT_EQ(got.codes, q.codes) << what;
    EXPECT_EQ(got.scales, q.scales) << what;
    EXPECT_EQ(got.zeros, q.zeros) << what;
    EXPECT_EQ(got.zeros_f, q.zeros_f) << what;
    EXPECT_EQ(got.g_idx, q.g_idx) << what;
  }
  expect_load_error(r, "model.norm.weight", "is not declared quantized");
}

TEST(Checkpoint, Fp8RoundTripEveryScaling) {
  const Fp8Scaling scalings[] = {Fp8Scaling::kPerTensor, Fp8Scaling::kPerRow,
                                 Fp8Scaling::kBlock1x128, Fp8Scaling::kBlock128x128};
  SafetensorsWriter w;
  std::vector<std::pair<std::string, Fp8Tensor>> written;
  for (DType dt : {DType::kE4M3, DType::kE5M2})
    for (Fp8Scaling s : scalings) {
      Fp8Tensor t;
      t.format.dtype = dt;
      t.format.scaling = s;
      t.rows = 130;  // just past one 128 block in both directions
      t.cols = 257;
      for (int64_t i = 0; i < t.rows * t.cols; ++i) {
        uint8_t code;
        do code = static_cast<uint8_t>(uniform(0, 255));
        while (!std::isfinite(dt == DType::kE4M3 ? e4m3_to_f32(code) : e5m2_to_f32(code)));
        t.codes.push_back(code);
      }
      std::uniform_real_distribution<float> pos(1e-4f, 4.0f);
      for (int64_t i = 0; i < t.scale_rows() * t.scale_cols(); ++i) t.scales.push_back(pos(rng()));
      ASSERT_TRUE(t.validate().ok()) << t.validate().message();
      const std::string name = "layers.0.q_proj." + t.format.name();
      add_fp8_tensor(w, name, t);
      written.emplace_back(name, std::move(t));
    }
  const auto r = write_and_open(w, "fp8.safetensors");
  for (const auto& [name, t] : written) {
    const std::string what = name;
    EXPECT_EQ(r.at(name).dtype, t.format.dtype) << what;
    const auto& scale = r.at(name + "_scale");
    if (t.format.scaling == Fp8Scaling::kPerTensor) {
      EXPECT_TRUE(scale.shape.empty()) << what;  // scalar, as in Llama-3 FP8 checkpoints
    } else {
      EXPECT_EQ(scale.shape, (std::vector<int64_t>{t.scale_rows(), t.scale_cols()})) << what;
    }
    const auto loaded = load_quantized(r, name);
    ASSERT_TRUE(std::holds_alternative<Fp8Tensor>(loaded)) << what;
    const auto& got = std::get<Fp8Tensor>(loaded);
    EXPECT_TRUE(got.format == t.format) << what;
    EXPECT_EQ(got.rows, t.rows) << what;
    EXPECT_EQ(got.cols, t.cols) << what;
    EXPECT_EQ(got.codes, t.codes) << what;
    EXPECT_EQ(got.scales, t.scales) << what;
  }
}

TEST(Checkpoint, Int8RoundTrip) {
  Int8Tensor t;
  t.rows = 7;
  t.cols = 33;
  for (int64_t i = 0; i < t.rows * t.cols; ++i) t.codes.push_back(static_cast<int8_t>(uniform(-127, 127)));
  for (int64_t r = 0; r < t.rows; ++r) t.scales.push_back(0.01f * static_cast<float>(r + 1));
  SafetensorsWriter w;
  add_int8_tensor(w, "w8", t);
  const auto r = write_and_open(w, "int8.safetensors");
  EXPECT_EQ(list_quantized(r).at("w8"), "int8");
  const auto loaded = load_quantized(r, "w8");
  ASSERT_TRUE(std::holds_alternative<Int8Tensor>(loaded));
  const auto& got = std::get<Int8Tensor>(loaded);
  EXPECT_EQ(got.rows, t.rows);
  EXPECT_EQ(got.cols, t.cols);
  EXPECT_EQ(got.codes, t.codes);
  EXPECT_EQ(got.scales, t.scales);
  EXPECT_TRUE(got.zeros.empty());

  t.zeros.assign(static_cast<size_t>(t.rows), 3);  // activations only: not storable
  SafetensorsWriter w2;
  EXPECT_THROW(add_int8_tensor(w2, "w8", t), Error);
}

TEST(Checkpoint, WriterValidatesInput) {
  IntWeightFormat f;
  IntWeight q = random_int_weight(f, 2, 128);
  q.scales[0] = NAN;
  SafetensorsWriter w;
  try {
    add_int_weight(w, "bad", q);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'bad'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(w.size(), 0u);
}

// Files that break the convention, built tensor by tensor.
TEST(Checkpoint, LoadRejectsBrokenFiles) {
  IntWeightFormat f;  // w4g128 symmetric f16
  const IntWeight q = random_int_weight(f, 2, 128);
  const auto packed = pack_codes_bitstream(q.codes, 2, 128, 4);
  std::vector<uint8_t> scales(2 * 2);
  for (int i = 0; i < 2; ++i) store_from_f32(scales.data(), DType::kF16, i, q.scales[i]);
  const std::string name = "lin";
  auto base = [&](bool version = true) {
    SafetensorsWriter w;
    w.set_metadata(std::string(kCheckpointTensorPrefix) + name, "w4g128");
    if (version) w.set_metadata(kCheckpointVersionKey, "1");
    return w;
  };
  {  // good file, to be sure the base is right
    SafetensorsWriter w = base();
    w.add(name + ".qweight", DType::kU8, {2, 64}, packed.data(), packed.size());
    w.add(name + ".scales", DType::kF16, {2, 1}, scales.data(), scales.size());
    EXPECT_NO_THROW((void)load_quantized(write_and_open(w, "good.safetensors"), name));
  }
  {
    SafetensorsWriter w = base(false);
    w.add(name + ".qweight", DType::kU8, {2, 64}, packed.data(), packed.size());
    w.add(name + ".scales", DType::kF16, {2, 1}, scales.data(), scales.size());
    expect_load_error(write_and_open(w, "noversion.safetensors"), name,
                      "unsupported lowbit.format_version");
  }
  {
    SafetensorsWriter w = base();
    w.add(name + ".qweight", DType::kU8, {2, 64}, packed.data(), packed.size());
    expect_load_error(write_and_open(w, "noscales.safetensors"), name, "missing tensor 'lin.scales'");
  }
  {
    SafetensorsWriter w = base();
    w.add(name + ".qweight", DType::kU8, {2, 64}, packed.data(), packed.size());
    const std::vector<uint8_t> two_groups(8, 0x3c);  // 2 x 2 f16 scales of 1.0
    w.add(name + ".scales", DType::kF16, {2, 2}, two_groups.data(), two_groups.size());
    expect_load_error(write_and_open(w, "shape.safetensors"), name,
                      "'lin.qweight' has the wrong shape (expected [2, 128] vs actual [2, 64])");
  }
  {
    SafetensorsWriter w = base();
    w.add(name + ".qweight", DType::kI8, {2, 64}, packed.data(), packed.size());
    w.add(name + ".scales", DType::kF16, {2, 1}, scales.data(), scales.size());
    expect_load_error(write_and_open(w, "dtype.safetensors"), name,
                      "'lin.qweight' has the wrong dtype (expected U8 vs actual I8)");
  }
  {  // a stray zero-point tensor for a symmetric format
    SafetensorsWriter w = base();
    w.add(name + ".qweight", DType::kU8, {2, 64}, packed.data(), packed.size());
    w.add(name + ".scales", DType::kF16, {2, 1}, scales.data(), scales.size());
    w.add(name + ".qzeros", DType::kU8, {2, 1}, packed.data(), 2);
    expect_load_error(write_and_open(w, "qzeros.safetensors"), name, "unexpected tensor 'lin.qzeros'");
  }
  {  // validate() catches a non-finite scale
    std::vector<uint8_t> bad = scales;
    store_from_f32(bad.data(), DType::kF16, 1, INFINITY);
    SafetensorsWriter w = base();
    w.add(name + ".qweight", DType::kU8, {2, 64}, packed.data(), packed.size());
    w.add(name + ".scales", DType::kF16, {2, 1}, bad.data(), bad.size());
    expect_load_error(write_and_open(w, "inf.safetensors"), name, "scale");
  }
  {
    SafetensorsWriter w = base();
    w.set_metadata(std::string(kCheckpointTensorPrefix) + name, "w4g100");
    w.add(name + ".qweight", DType::kU8, {2, 64}, packed.data(), packed.size());
    expect_load_error(write_and_open(w, "fmt.safetensors"), name, "unknown format name");
  }
  {  // per-channel 3-bit: 2 bytes per row could be K=4 or K=5; no K recorded
    SafetensorsWriter w = base();
    w.set_metadata(std::string(kCheckpointTensorPrefix) + name, "w3");
    const uint8_t qw[4] = {0, 0, 0, 0};
    w.add(name + ".qweight", DType::kU8, {2, 2}, qw, 4);
    w.add(name + ".scales", DType::kF16, {2, 1}, scales.data(), 4);
    expect_load_error(write_and_open(w, "ambiguous.safetensors"), name, "K cannot be derived");
  }
  {  // per-channel 4-bit K=3 recorded, padding bits set
    SafetensorsWriter w = base();
    w.set_metadata(std::string(kCheckpointTensorPrefix) + name, "w4");
    w.set_metadata("lowbit.k." + name, "3");
    const uint8_t qw[4] = {0x21, 0x03, 0x21, 0x53};
    w.add(name + ".qweight", DType::kU8, {2, 2}, qw, 4);
    w.add(name + ".scales", DType::kF16, {2, 1}, scales.data(), 4);
    expect_load_error(write_and_open(w, "padding.safetensors"), name, "nonzero padding bits");
  }
}

}  // namespace
}  // namespace lowbit
