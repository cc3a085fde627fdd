// Tests of the fp8 checkpoint conventions (include/lowbit/import_fp8.hpp): each convention on
// a file written by the `safetensors` library (tests/data/fp8/, tools/dev/make_fp8_fixtures.py)
// against the `expected` tensor the fixture script computed with ml_dtypes' own e4m3 decoding
// (bit-exact), each malformed fixture refused with its problem named, then in-memory files
// for the edges (names, shapes, n = 1, whole blocks, every bad value), and the exact change of
// scale grid that `lowbit quantize` uses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "lowbit/checkpoint.hpp"
#include "lowbit/import_fp8.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/status.hpp"
#include "import_test_util.hpp"

namespace lowbit {
namespace {

const std::string kW = "model.layers.0.mlp.up_proj.weight";
const std::string kInput = "model.layers.0.mlp.up_proj.input_scale";

std::string fixture(const std::string& name) {
  return std::string(LOWBIT_TEST_DATA_DIR) + "/fp8/" + name + ".safetensors";
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Bit-for-bit comparison of t's dequantized values with the fixture's `expected` (so -0 and
// +0 differ, and no tolerance hides a wrong scale).
void expect_matches_expected(const SafetensorsReader& file, const Fp8Tensor& t) {
  const TensorInfo& e = file.at("expected");
  ASSERT_EQ(e.dtype, DType::kF32);
  ASSERT_EQ(e.shape, (std::vector<int64_t>{t.rows, t.cols}));
  const std::vector<float> want = file.read_f32(e);
  int64_t bad = 0;
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c) {
      const float got = t.dequant(r, c), w = want[static_cast<size_t>(r * t.cols + c)];
      if (bits_of(got) != bits_of(w) && bad++ < 5)
        ADD_FAILURE() << file.path() << " (" << r << ", " << c << "): got " << got << " expected "
                      << w << " (n=" << t.rows << " k=" << t.cols << " "
                      << t.format.name() << ")";
    }
  EXPECT_EQ(bad, 0) << file.path();
  // The codes are the file's bytes, unchanged.
  const TensorInfo& w = file.at(kW);
  ASSERT_EQ(t.codes.size(), w.nbytes());
  EXPECT_EQ(std::memcmp(t.codes.data(), file.data(w), w.nbytes()), 0);
}

// Expects `f()` to throw one line naming `where` (the file label) and `weight`, and containing
// every needle (import_test_util.hpp).
template <typename F>
void expect_error(F f, const std::string& where, const std::string& weight,
                  const std::vector<std::string>& needles) {
  test::expect_import_error(f, "fp8", where, weight, needles);
}

// ---------------------------------------------------------------------------------------
// The fixtures
// ---------------------------------------------------------------------------------------
struct WellFormed {
  const char* file;
  Fp8Convention convention;
  int64_t n, k;
  const char* scale;        // the companion read
  float input_scale;        // 0: none
};

TEST(import_fp8, fixtures_every_convention_matches_expected_exactly) {
  const WellFormed cases[] = {
      {"llama_fp8_tensor", Fp8Convention::kPerTensor, 96, 160, "_scale", 0.0125f},
      {"tensor_scale1", Fp8Convention::kPerTensor, 64, 48, "_scale", round_to(DType::kBF16, 0.02f)},
      {"channel_fp8", Fp8Convention::kPerChannel, 200, 144, "_scale", 0.0f},
      {"channel_1d", Fp8Convention::kPerChannel, 48, 64, "_scale", 0.5f},
      {"deepseek_block", Fp8Convention::kBlock128, 200, 144, "_scale_inv", 0.0f},
  };
  for (const WellFormed& c : cases) {
    SCOPED_TRACE(c.file);
    const SafetensorsReader file = SafetensorsReader::open(fixture(c.file));
    EXPECT_EQ(fp8_weight_names(file), std::vector<std::string>{kW});
    const Fp8Import imp = import_fp8(file, kW);
    EXPECT_EQ(imp.source.convention, c.convention);
    EXPECT_EQ(imp.source.weight, kW);
    EXPECT_EQ(imp.source.scale, kW + c.scale);
    EXPECT_EQ(imp.source.n, c.n);
    EXPECT_EQ(imp.source.k, c.k);
    EXPECT_EQ(imp.weight.format.dtype, DType::kE4M3);
    EXPECT_EQ(imp.weight.format.scaling, fp8_convention_scaling(c.convention));
    EXPECT_TRUE(imp.weight.validate().ok()) << imp.weight.validate().message();
    if (c.input_scale > 0) {
      ASSERT_TRUE(imp.input_scale.has_value());
      EXPECT_EQ(*imp.input_scale, c.input_scale);
      EXPECT_EQ(imp.source.input_scale, kInput);
    } else {
      EXPECT_FALSE(imp.input_scale.has_value());
      EXPECT_EQ(imp.source.input_scale, "");
    }
    expect_matches_expected(file, imp.weight);
    // detect_fp8 agrees with the import.
    const Fp8Source src = detect_fp8(file, kW);
    EXPECT_EQ(src.convention, imp.source.convention);
    EXPECT_EQ(src.scale, imp.source.scale);
  }
}

TEST(import_fp8, fixture_deepseek_partial_blocks_use_their_own_scale) {
  // n = 200, k = 144: block (1, 1) covers rows 128..199 and columns 128..143 only.
  const SafetensorsReader file = SafetensorsReader::open(fixture("deepseek_block"));
  const Fp8Import imp = import_fp8(file, kW);
  ASSERT_EQ(imp.weight.scale_rows(), 2);
  ASSERT_EQ(imp.weight.scale_cols(), 2);
  const std::vector<float> inv = file.read_f32(file.at(kW + "_scale_inv"));
  EXPECT_EQ(imp.weight.scales, inv);
  EXPECT_EQ(imp.weight.scale_of(199, 143), inv[3]);
  EXPECT_EQ(imp.weight.scale_of(127, 128), inv[1]);
  EXPECT_EQ(imp.weight.scale_of(128, 127), inv[2]);
}

TEST(import_fp8, fixtures_malformed_are_refused_with_the_problem_named) {
  struct Bad {
    const char* file;
    std::vector<std::string> needles;
  };
  const Bad cases[] = {
      {"bad_scale_shape", {"'" + kW + "_scale'", "shape no convention has", "actual [3]"}},
      {"bad_block_shape", {"'" + kW + "_scale_inv'", "expected [2, 1]", "n=130, k=16", "actual [1, 1]"}},
      {"e5m2_weight", {"wrong dtype", "expected F8_E4M3 vs actual F8_E5M2"}},
      {"int_scale", {"'" + kW + "_scale'", "wrong dtype", "actual I32"}},
      {"zero_scale", {"'" + kW + "_scale'", "is 0", "finite and > 0"}},
      {"nonfinite_scale_inv", {"'" + kW + "_scale_inv'", "at block (1, 0) is inf"}},
      {"nan_code", {"NaN code 0x7f at row 3, col 5"}},
      {"missing_scale", {"missing scale", "'" + kW + "_scale'", "'" + kW + "_scale_inv'"}},
      {"both_scales", {"both", "'" + kW + "_scale'", "'" + kW + "_scale_inv'"}},
      {"bad_input_scale", {"input scale '" + kInput + "'", "wrong shape", "actual [2]"}},
      {"negative_input_scale", {"input scale '" + kInput + "'", "is -1"}},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string path = fixture(c.file);
    const SafetensorsReader file = SafetensorsReader::open(path);
    // Every malformed weight is still found, so that quantize and inspect report it.
    EXPECT_EQ(fp8_weight_names(file), std::vector<std::string>{kW});
    expect_error([&] { (void)import_fp8(file, kW); }, path, kW, c.needles);
  }
}

// ---------------------------------------------------------------------------------------
// In-memory files
// ---------------------------------------------------------------------------------------
using test::Part;
using test::floats;

Part codes(const std::string& name, std::vector<int64_t> shape, std::vector<uint8_t> values,
           DType dtype = DType::kE4M3) {
  return {name, dtype, std::move(shape), std::move(values)};
}

// A safetensors image and the reader over it (the image must outlive the reader).
class MemFile {
 public:
  explicit MemFile(const std::vector<Part>& parts)
      : bytes_(image(parts)), reader_(SafetensorsReader::from_memory(bytes_.data(), bytes_.size(), "mem")) {}
  const SafetensorsReader& operator*() const { return reader_; }

 private:
  static std::vector<uint8_t> image(const std::vector<Part>& parts) {
    nlohmann::json header = nlohmann::json::object();
    std::vector<uint8_t> data;
    for (const Part& p : parts) {
      const size_t begin = data.size();
      data.insert(data.end(), p.bytes.begin(), p.bytes.end());
      header[p.name] = {{"dtype", dtype_safetensors_name(p.dtype)},
                        {"shape", p.shape},
                        {"data_offsets", {begin, data.size()}}};
    }
    std::string h = header.dump();
    h.append((8 - h.size() % 8) % 8, ' ');
    std::vector<uint8_t> out(8 + h.size() + data.size());
    for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(static_cast<uint64_t>(h.size()) >> (8 * i));
    std::memcpy(out.data() + 8, h.data(), h.size());
    if (!data.empty()) std::memcpy(out.data() + 8 + h.size(), data.data(), data.size());
    return out;
  }
  std::vector<uint8_t> bytes_;
  SafetensorsReader reader_;
};

// e4m3 codes of exact small values: 0x38 = 1, 0x40 = 2, 0xb8 = -1, 0x30 = 0.5, 0x00 = 0.
constexpr uint8_t kOne = 0x38, kTwo = 0x40, kMinusOne = 0xb8, kHalf = 0x30;

TEST(import_fp8, memory_per_tensor_by_hand) {
  const MemFile f({codes("w.weight", {2, 2}, {kOne, kTwo, kMinusOne, kHalf}),
                   floats("w.weight_scale", {}, {0.75f}),
                   floats("w.input_scale", {1}, {0.25f}, DType::kBF16)});
  const Fp8Import imp = import_fp8(*f, "w.weight");
  EXPECT_EQ(imp.source.convention, Fp8Convention::kPerTensor);
  EXPECT_EQ(imp.weight.dequant(0, 0), 0.75f);
  EXPECT_EQ(imp.weight.dequant(0, 1), 1.5f);
  EXPECT_EQ(imp.weight.dequant(1, 0), -0.75f);
  EXPECT_EQ(imp.weight.dequant(1, 1), 0.375f);
  ASSERT_TRUE(imp.input_scale.has_value());
  EXPECT_EQ(*imp.input_scale, 0.25f);
  EXPECT_EQ(imp.source.input_scale, "w.input_scale");
}

TEST(import_fp8, memory_per_channel_both_shapes_and_scale_dtypes) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{3, 1}, std::vector<int64_t>{3}})
    for (DType sdt : {DType::kF32, DType::kBF16, DType::kF16}) {
      SCOPED_TRACE(std::to_string(shape.size()) + "-D " + dtype_name(sdt));
      const MemFile f({codes("p.weight", {3, 2}, {kOne, kTwo, kOne, kTwo, kOne, kMinusOne}),
                       floats("p.weight_scale", shape, {0.5f, 0.25f, 3.0f}, sdt)});
      const Fp8Import imp = import_fp8(*f, "p.weight");
      EXPECT_EQ(imp.source.convention, Fp8Convention::kPerChannel);
      EXPECT_EQ(imp.weight.format.scaling, Fp8Scaling::kPerRow);
      EXPECT_EQ(imp.weight.dequant(0, 1), 1.0f);
      EXPECT_EQ(imp.weight.dequant(1, 0), 0.25f);
      EXPECT_EQ(imp.weight.dequant(2, 1), -3.0f);
    }
}

TEST(import_fp8, memory_one_row_is_per_tensor_for_1_and_per_channel_for_1x1) {
  // n = 1: [1] is read as per-tensor, [1, 1] as per-channel; both mean the same W.
  const MemFile a({codes("weight", {1, 2}, {kOne, kTwo}), floats("weight_scale", {1}, {2.0f})});
  const MemFile b({codes("weight", {1, 2}, {kOne, kTwo}), floats("weight_scale", {1, 1}, {2.0f})});
  const Fp8Import ia = import_fp8(*a, "weight"), ib = import_fp8(*b, "weight");
  EXPECT_EQ(ia.source.convention, Fp8Convention::kPerTensor);
  EXPECT_EQ(ib.source.convention, Fp8Convention::kPerChannel);
  EXPECT_EQ(ia.weight.dequant(0, 1), 4.0f);
  EXPECT_EQ(ib.weight.dequant(0, 1), 4.0f);
}

TEST(import_fp8, memory_block_whole_and_partial) {
  for (const auto& [n, k] : {std::pair<int64_t, int64_t>{128, 256}, {129, 1}, {1, 129}, {257, 300}}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k));
    const int64_t sr = (n + 127) / 128, sc = (k + 127) / 128;
    std::vector<uint8_t> c(static_cast<size_t>(n * k), kOne);
    std::vector<float> s;
    for (int64_t i = 0; i < sr * sc; ++i) s.push_back(static_cast<float>(i + 1) / 8.0f);
    const MemFile f({codes("x.weight", {n, k}, c), floats("x.weight_scale_inv", {sr, sc}, s)});
    const Fp8Import imp = import_fp8(*f, "x.weight");
    EXPECT_EQ(imp.source.convention, Fp8Convention::kBlock128);
    EXPECT_EQ(imp.weight.format.scaling, Fp8Scaling::kBlock128x128);
    for (int64_t r : {int64_t{0}, n - 1})
      for (int64_t col : {int64_t{0}, k - 1})
        EXPECT_EQ(imp.weight.dequant(r, col), s[static_cast<size_t>((r / 128) * sc + col / 128)]);
  }
}

TEST(import_fp8, memory_names_and_companions) {
  EXPECT_EQ(fp8_companion_names("a.b.weight"),
            (std::vector<std::string>{"a.b.weight_scale", "a.b.weight_scale_inv", "a.b.input_scale"}));
  EXPECT_EQ(fp8_companion_names("weight"),
            (std::vector<std::string>{"weight_scale", "weight_scale_inv", "input_scale"}));
  // A name that does not end in "weight" has no input-scale companion.
  EXPECT_EQ(fp8_companion_names("w"), (std::vector<std::string>{"w_scale", "w_scale_inv"}));
  const MemFile f({codes("w", {1, 2}, {kOne, kTwo}), floats("w_scale", {}, {1.0f}),
                   floats("input_scale", {}, {-5.0f})});  // not w's: ignored
  const Fp8Import imp = import_fp8(*f, "w");
  EXPECT_FALSE(imp.input_scale.has_value());

  // Candidates: fp8 tensors and anything with a _scale_inv; fp8-typed companions are not.
  const MemFile g({codes("a.weight", {1, 1}, {kOne}), floats("a.weight_scale", {}, {1.0f}),
                   floats("b.weight", {1, 1}, {1.0f}, DType::kBF16),
                   floats("b.weight_scale_inv", {1, 1}, {1.0f}),
                   codes("c.weight", {1, 1}, {kOne}), codes("c.weight_scale", {}, {kOne}),
                   floats("d.weight", {1, 1}, {1.0f}), floats("d.weight_scale", {}, {1.0f}),
                   codes("e.weight", {2}, {kOne, kOne}, DType::kE5M2)});
  EXPECT_EQ(fp8_weight_names(*g),
            (std::vector<std::string>{"a.weight", "b.weight", "c.weight", "e.weight"}));
  expect_error([&] { (void)import_fp8(*g, "b.weight"); }, "mem", "b.weight",
               {"wrong dtype", "actual BF16"});
  expect_error([&] { (void)import_fp8(*g, "c.weight"); }, "mem", "c.weight",
               {"scale 'c.weight_scale'", "wrong dtype", "actual F8_E4M3"});
  expect_error([&] { (void)import_fp8(*g, "e.weight"); }, "mem", "e.weight",
               {"actual F8_E5M2"});
  expect_error([&] { (void)import_fp8(*g, "nope"); }, "mem", "nope", {"no such tensor"});
}

TEST(import_fp8, memory_bad_shapes) {
  struct Case {
    std::vector<Part> parts;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {{codes("w", {2, 2, 1}, {kOne, kOne, kOne, kOne}), floats("w_scale", {}, {1.0f})},
       {"wrong rank", "[2, 2, 1]"}},
      {{codes("w", {0, 16}, {}), floats("w_scale", {}, {1.0f})}, {"is empty", "[0, 16]"}},
      {{codes("w", {2, 2}, {kOne, kOne, kOne, kOne}), floats("w_scale", {2, 2}, {1, 1, 1, 1})},
       {"shape no convention has", "[2, 1] or [2] per-channel", "actual [2, 2]"}},
      {{codes("w", {2, 2}, {kOne, kOne, kOne, kOne}), floats("w_scale", {1, 2}, {1, 1})},
       {"shape no convention has", "actual [1, 2]"}},
      {{codes("w", {2, 2}, {kOne, kOne, kOne, kOne}), floats("w_scale", {1, 1}, {1})},
       {"shape no convention has", "actual [1, 1]", "must be named 'w_scale_inv'"}},
      {{codes("w", {2, 2}, {kOne, kOne, kOne, kOne}), floats("w_scale_inv", {1}, {1})},
       {"'w_scale_inv' has the wrong shape", "expected [1, 1]", "actual [1]"}},
      {{codes("w", {200, 1}, std::vector<uint8_t>(200, kOne)), floats("w_scale_inv", {1, 1}, {1})},
       {"expected [2, 1]", "n=200, k=1"}},
      {{codes("w", {2, 2}, {kOne, kOne, kOne, kOne}), floats("w_scale", {}, {1}, DType::kF64)},
       {"wrong dtype (expected F32, BF16 or F16 vs actual F64)"}},
      {{codes("weight", {1, 1}, {kOne}), floats("weight_scale", {}, {1}),
        floats("input_scale", {1, 1}, {1})},
       {"input scale 'input_scale' has the wrong shape", "actual [1, 1]"}},
      {{codes("weight", {1, 1}, {kOne}), floats("weight_scale", {}, {1}),
        codes("input_scale", {}, {kOne})},
       {"input scale 'input_scale' has the wrong dtype", "actual F8_E4M3"}},
  };
  for (const Case& c : cases) {
    const MemFile f(c.parts);
    const std::string name = c.parts[0].name;
    SCOPED_TRACE(c.needles[0]);
    expect_error([&] { (void)import_fp8(*f, name); }, "mem", name, c.needles);
    // The header-only detection refuses them too.
    expect_error([&] { (void)detect_fp8(*f, name); }, "mem", name, c.needles);
  }
}

TEST(import_fp8, memory_bad_values) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    std::vector<Part> parts;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {{codes("w", {1, 2}, {kOne, 0xff}), floats("w_scale", {}, {1})},
       {"NaN code 0xff at row 0, col 1"}},
      {{codes("w", {1, 2}, {kOne, kOne}), floats("w_scale", {}, {-2})}, {"scale 'w_scale' is -2"}},
      {{codes("w", {1, 2}, {kOne, kOne}), floats("w_scale", {}, {nan})}, {"is nan"}},
      {{codes("w", {2, 1}, {kOne, kOne}), floats("w_scale", {2, 1}, {1, inf}, DType::kBF16)},
       {"at row 1 is inf"}},
      {{codes("w", {2, 1}, {kOne, kOne}), floats("w_scale", {2}, {0, 1}, DType::kF16)},
       {"at row 0 is 0"}},
      {{codes("w", {1, 200}, std::vector<uint8_t>(200, kOne)), floats("w_scale_inv", {1, 2}, {1, -0.0f})},
       {"at block (0, 1) is -0"}},
      {{codes("weight", {1, 1}, {kOne}), floats("weight_scale", {}, {1}), floats("input_scale", {}, {inf})},
       {"input scale 'input_scale' is inf"}},
      {{codes("weight", {1, 1}, {kOne}), floats("weight_scale", {}, {1}), floats("input_scale", {}, {0})},
       {"input scale 'input_scale' is 0"}},
  };
  for (const Case& c : cases) {
    const MemFile f(c.parts);
    const std::string name = c.parts[0].name;
    SCOPED_TRACE(c.needles[0]);
    expect_error([&] { (void)import_fp8(*f, name); }, "mem", name, c.needles);
    // Values are import's business: detection alone, which reads no data, accepts them.
    EXPECT_NO_THROW((void)detect_fp8(*f, name));
  }
}

TEST(import_fp8, memory_subnormal_and_max_codes_decode_exactly) {
  // 0x01 = 2^-9 (smallest subnormal), 0x7e = 448, 0x80 = -0, 0x07 = 7 * 2^-9.
  const MemFile f({codes("w", {1, 4}, {0x01, 0x7e, 0x80, 0x07}), floats("w_scale", {}, {0.5f})});
  const Fp8Tensor t = import_fp8(*f, "w").weight;
  EXPECT_EQ(t.dequant(0, 0), std::ldexp(1.0f, -10));
  EXPECT_EQ(t.dequant(0, 1), 224.0f);
  EXPECT_EQ(bits_of(t.dequant(0, 2)), bits_of(-0.0f));
  EXPECT_EQ(t.dequant(0, 3), 7.0f * std::ldexp(1.0f, -10));
}

// ---------------------------------------------------------------------------------------
// Exact change of scale grid, and the lowbit checkpoint round trip
// ---------------------------------------------------------------------------------------
Fp8Tensor fp8(Fp8Scaling s, int64_t rows, int64_t cols, std::vector<float> scales) {
  Fp8Tensor t;
  t.format.scaling = s;
  t.rows = rows;
  t.cols = cols;
  t.codes.resize(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < t.codes.size(); ++i) t.codes[i] = static_cast<uint8_t>(i % 0x7e);
  t.scales = std::move(scales);
  return t;
}

void expect_same_values(const Fp8Tensor& a, const Fp8Tensor& b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.codes, b.codes);
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t c = 0; c < a.cols; ++c)
      ASSERT_EQ(bits_of(a.dequant(r, c)), bits_of(b.dequant(r, c))) << r << ", " << c;
}

TEST(import_fp8, rescale_exact_when_one_scale_covers_each_cell) {
  const Fp8Tensor tensor = fp8(Fp8Scaling::kPerTensor, 200, 300, {0.125f});
  for (Fp8Scaling s : {Fp8Scaling::kPerTensor, Fp8Scaling::kPerRow, Fp8Scaling::kBlock1x128,
                       Fp8Scaling::kBlock128x128}) {
    SCOPED_TRACE(fp8_scaling_name(s));
    const auto r = fp8_rescale_exact(tensor, s);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->format.scaling, s);
    EXPECT_TRUE(r->validate().ok()) << r->validate().message();
    expect_same_values(*r, tensor);
  }
  // Rows 0..127 share one scale and rows 128..199 another: 128x128 blocks can hold them.
  std::vector<float> rows(200, 0.5f);
  for (size_t i = 128; i < 200; ++i) rows[i] = 0.25f;
  const Fp8Tensor row = fp8(Fp8Scaling::kPerRow, 200, 300, rows);
  const auto blk = fp8_rescale_exact(row, Fp8Scaling::kBlock128x128);
  ASSERT_TRUE(blk.has_value());
  EXPECT_EQ(blk->scales, (std::vector<float>{0.5f, 0.5f, 0.5f, 0.25f, 0.25f, 0.25f}));
  expect_same_values(*blk, row);
  // ...and back: every row of a block takes the block's scale.
  const auto back = fp8_rescale_exact(*blk, Fp8Scaling::kPerRow);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->scales, rows);
}

TEST(import_fp8, rescale_refused_when_a_cell_would_need_two_scales) {
  std::vector<float> rows(200, 0.5f);
  rows[130] = 0.25f;  // differs inside the second 128-row block
  const Fp8Tensor row = fp8(Fp8Scaling::kPerRow, 200, 300, rows);
  EXPECT_FALSE(fp8_rescale_exact(row, Fp8Scaling::kBlock128x128).has_value());
  EXPECT_FALSE(fp8_rescale_exact(row, Fp8Scaling::kPerTensor).has_value());
  EXPECT_TRUE(fp8_rescale_exact(row, Fp8Scaling::kBlock1x128).has_value());
  const Fp8Tensor blk = fp8(Fp8Scaling::kBlock128x128, 200, 300, {1, 1, 1, 1, 1, 2});
  EXPECT_FALSE(fp8_rescale_exact(blk, Fp8Scaling::kPerTensor).has_value());
  EXPECT_FALSE(fp8_rescale_exact(blk, Fp8Scaling::kPerRow).has_value());
  // A tensor that is not valid is an error, not a "no".
  Fp8Tensor bad = row;
  bad.scales.pop_back();
  EXPECT_THROW((void)fp8_rescale_exact(bad, Fp8Scaling::kPerTensor), Error);
}

TEST(import_fp8, imported_tensor_round_trips_through_a_lowbit_checkpoint) {
  for (const char* name : {"llama_fp8_tensor", "channel_fp8", "deepseek_block"}) {
    SCOPED_TRACE(name);
    const SafetensorsReader in = SafetensorsReader::open(fixture(name));
    const Fp8Tensor t = import_fp8(in, kW).weight;
    SafetensorsWriter w;
    add_fp8_tensor(w, kW, t);
    const std::string path = std::string(LOWBIT_TEST_TMP_DIR) + "/import_fp8_" + name + ".safetensors";
    w.write(path);
    const SafetensorsReader out = SafetensorsReader::open(path);
    const QuantizedTensor q = load_quantized(out, kW);
    ASSERT_TRUE(std::holds_alternative<Fp8Tensor>(q));
    expect_same_values(std::get<Fp8Tensor>(q), t);
    EXPECT_EQ(std::get<Fp8Tensor>(q).format, t.format);
    // The lowbit file is itself a checkpoint of the per-tensor / per-channel conventions or,
    // for blocks, one lowbit names NAME_scale; the importer reads the first two back.
    if (t.format.scaling != Fp8Scaling::kBlock128x128) expect_same_values(import_fp8(out, kW).weight, t);
  }
}

}  // namespace
}  // namespace lowbit
