// Tests of the compressed-tensors int8 W8A8 import (include/lowbit/import_int8.hpp): each
// strategy on a file written by the `safetensors` library (tests/data/int8/,
// make_int8_fixtures.py) against the codes recomputed here from the script's formula and the
// scale bits the script wrote to expected.json, each malformed fixture refused with its
// problem named, then small files written by lowbit's own SafetensorsWriter for the edges
// (names, shapes, dtypes, every bad value), and every imported weight packed into a
// lowbit::Gemm on the CPU and run against an fp64 loop over the dequantized operands.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "lowbit/gemm.hpp"
#include "lowbit/import_int8.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"
#include "lowbit/status.hpp"
#include "import_test_util.hpp"

namespace lowbit {
namespace {

const std::string kP = "model.layers.0.self_attn.o_proj";
const std::string kW = kP + ".weight";

std::string fixture(const std::string& name) {
  return std::string(LOWBIT_TEST_DATA_DIR) + "/int8/" + name + ".safetensors";
}

nlohmann::json expected_json() {
  std::ifstream in(std::string(LOWBIT_TEST_DATA_DIR) + "/int8/expected.json");
  EXPECT_TRUE(in.good()) << "tests/data/int8/expected.json";
  return nlohmann::json::parse(in);
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// The codes of every fixture weight (make_int8_fixtures.py `codes()`).
int8_t formula_code(int64_t r, int64_t c, int64_t k) {
  return static_cast<int8_t>(((r * k + c) * 7 + 3) % 256 - 128);
}

// Expects `f()` to throw one line naming `where` (the file label) and `weight`, and containing
// every needle (import_test_util.hpp).
template <typename F>
void expect_error(F f, const std::string& where, const std::string& weight,
                  const std::vector<std::string>& needles) {
  test::expect_import_error(f, "int8", where, weight, needles);
}

// ---------------------------------------------------------------------------------------
// The fixtures
// ---------------------------------------------------------------------------------------
const char* const kWellFormed[] = {"channel_f32_static", "channel_1d_bf16", "tensor_f16",
                                   "symmetric_zero_point", "static_asym_input"};

TEST(import_int8, fixtures_every_strategy_matches_expected_exactly) {
  const nlohmann::json all = expected_json();
  ASSERT_EQ(all.size(), std::size(kWellFormed));
  for (const char* name : kWellFormed) {
    SCOPED_TRACE(name);
    const nlohmann::json& e = all.at(name);
    const SafetensorsReader file = SafetensorsReader::open(fixture(name));
    EXPECT_EQ(int8_weight_names(file), std::vector<std::string>{kW});
    const Int8Import imp = import_int8(file, kW);
    const Int8Tensor& t = imp.weight;
    const int64_t n = e.at("n"), k = e.at("k");
    EXPECT_EQ(imp.source.weight, kW);
    EXPECT_EQ(imp.source.scale, kW + "_scale");
    EXPECT_EQ(imp.source.n, n);
    EXPECT_EQ(imp.source.k, k);
    EXPECT_EQ(int8_convention_name(imp.source.convention), e.at("convention").get<std::string>());
    // The companions the script wrote are the ones the import found.
    std::vector<std::string> found = {imp.source.scale};
    for (const std::string* s : {&imp.source.zero_point, &imp.source.input_scale,
                                 &imp.source.input_zero_point})
      if (!s->empty()) found.push_back(*s);
    std::sort(found.begin(), found.end());
    EXPECT_EQ(found, e.at("companions").get<std::vector<std::string>>());

    ASSERT_EQ(t.rows, n);
    ASSERT_EQ(t.cols, k);
    EXPECT_TRUE(t.validate().ok()) << t.validate().message();
    EXPECT_FALSE(t.has_zero_point());
    // Codes: the formula, and the file's bytes unchanged.
    ASSERT_EQ(t.codes.size(), static_cast<size_t>(n * k));
    int64_t bad = 0;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c)
        if (t.codes[static_cast<size_t>(r * k + c)] != formula_code(r, c, k) && bad++ < 5)
          ADD_FAILURE() << "code (" << r << ", " << c << ")";
    EXPECT_EQ(bad, 0);
    const TensorInfo& w = file.at(kW);
    EXPECT_EQ(std::memcmp(t.codes.data(), file.data(w), w.nbytes()), 0);
    // Scales: fp32 bit patterns, one per row.
    const auto want = e.at("scale_bits").get<std::vector<uint32_t>>();
    ASSERT_EQ(t.scales.size(), want.size());
    for (size_t r = 0; r < want.size(); ++r) EXPECT_EQ(bits_of(t.scales[r]), want[r]) << "row " << r;
    // dequant is code * scale, one fp32 product.
    EXPECT_EQ(t.dequant(n - 1, k - 1), static_cast<float>(formula_code(n - 1, k - 1, k)) *
                                           from_bits(want.back()));
    // Input parameters.
    if (e.at("input_scale_bits").is_null()) {
      EXPECT_FALSE(imp.input_scale.has_value());
    } else {
      ASSERT_TRUE(imp.input_scale.has_value());
      EXPECT_EQ(bits_of(*imp.input_scale), e.at("input_scale_bits").get<uint32_t>());
    }
    if (e.at("input_zero_point").is_null()) {
      EXPECT_FALSE(imp.input_zero_point.has_value());
    } else {
      ASSERT_TRUE(imp.input_zero_point.has_value());
      EXPECT_EQ(*imp.input_zero_point, e.at("input_zero_point").get<int32_t>());
    }
    // detect_int8 agrees with the import.
    const Int8Source src = detect_int8(file, kW);
    EXPECT_EQ(src.convention, imp.source.convention);
    EXPECT_EQ(src.zero_point, imp.source.zero_point);
    EXPECT_EQ(src.input_zero_point, imp.source.input_zero_point);
  }
}

TEST(import_int8, fixture_static_asym_input_values) {
  // Spelled out for the fixture the task is about: zero point -3 (I32 [1]), scale 0.02 (F32 [1]).
  const Int8Import imp = import_int8(SafetensorsReader::open(fixture("static_asym_input")), kW);
  EXPECT_EQ(imp.source.input_zero_point, kP + ".input_zero_point");
  EXPECT_EQ(imp.source.input_scale, kP + ".input_scale");
  EXPECT_EQ(imp.input_zero_point, std::optional<int32_t>(-3));
  EXPECT_EQ(imp.input_scale, std::optional<float>(0.02f));
}

TEST(import_int8, fixtures_malformed_are_refused_with_the_problem_named) {
  struct Bad {
    const char* file;
    bool listed;  // int8_weight_names() lists W (2-D I8 with a _scale)
    std::vector<std::string> needles;
  };
  const std::string scale = "scale '" + kW + "_scale'";
  const std::string zp = "zero point '" + kW + "_zero_point'";
  const std::string in_scale = "input scale '" + kP + ".input_scale'";
  const std::string in_zp = "input zero point '" + kP + ".input_zero_point'";
  const Bad cases[] = {
      {"weight_u8", false, {"wrong dtype (expected I8 vs actual U8)"}},
      {"weight_3d", false, {"wrong rank", "[2, 4, 16]"}},
      {"weight_empty", true, {"is empty", "[0, 16]"}},
      {"missing_scale", false, {"missing scale", "'" + kW + "_scale'"}},
      {"scale_f64", true, {scale, "wrong dtype (expected F32, BF16 or F16 vs actual F64)"}},
      {"scale_bad_shape", true, {scale, "shape no strategy has", "[8, 1] or [8] per-channel",
                                 "actual [3]"}},
      {"scale_group", true, {scale, "strategy \"group\"", "4 groups along k=16", "config.json"}},
      {"scale_negative", true, {scale, "at row 2 is -0.5", "finite and > 0"}},
      {"scale_inf_bf16", true, {scale, "at row 5 is inf"}},
      {"asym_weight", true, {zp, "at row 3 is 5", "asymmetric int8 weights are not supported: "
                                                  "the int8 GEMMs take symmetric weights"}},
      {"zero_point_f32", true, {zp, "wrong dtype (expected I8 or I32 vs actual F32)"}},
      {"zero_point_shape", true, {zp, "wrong shape", "[] or [1] per-tensor like the scale",
                                  "actual [8]"}},
      {"input_scale_shape", true, {in_scale, "wrong shape", "actual [2]"}},
      {"input_scale_zero", true, {in_scale, "is 0 (expected finite and > 0)"}},
      {"input_zp_range", true, {in_zp, "is 200", "[-128, 127]"}},
      {"input_zp_no_scale", true, {in_zp, "no input scale '" + kP + ".input_scale'"}},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string path = fixture(c.file);
    const SafetensorsReader file = SafetensorsReader::open(path);
    EXPECT_EQ(int8_weight_names(file),
              c.listed ? std::vector<std::string>{kW} : std::vector<std::string>{});
    expect_error([&] { (void)import_int8(file, kW); }, path, kW, c.needles);
  }
}

// Every well-formed fixture's weight through Gemm on the CPU: describe, can_implement, pack,
// run. Activations are quantized the way the checkpoint says: statically with its input scale
// (and zero point) when it has one, else dynamically per token (quantize_int8).
TEST(import_int8, fixtures_pack_into_cpu_gemm_and_run) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const char* name : kWellFormed) {
    const Int8Import imp = import_int8(SafetensorsReader::open(fixture(name)), kW);
    const Int8Tensor& w = imp.weight;
    for (const int64_t m : {int64_t{1}, int64_t{3}, int64_t{17}}) {
      const int64_t n = w.rows, k = w.cols;
      SCOPED_TRACE(std::string(name) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
                   " k=" + std::to_string(k));
      std::vector<float> x(static_cast<size_t>(m * k));
      for (float& v : x) v = dist(rng);
      Int8Tensor a;
      if (imp.input_scale) {
        // Static: q = clamp(rne(x / s) + z, -128, 127), every row with the same s and z.
        const float s = *imp.input_scale;
        const int32_t z = imp.input_zero_point.value_or(0);
        a.rows = m;
        a.cols = k;
        for (const float v : x)
          a.codes.push_back(static_cast<int8_t>(
              std::clamp(static_cast<int32_t>(std::nearbyint(v / s)) + z, -128, 127)));
        a.scales.assign(static_cast<size_t>(m), s);
        if (imp.input_zero_point) a.zeros.assign(static_cast<size_t>(m), z);
      } else {
        a = quantize_int8(x.data(), m, k, false);
      }
      ASSERT_TRUE(a.validate().ok()) << a.validate().message();

      GemmDesc d;
      d.m = m;
      d.n = n;
      d.k = k;
      d.a.dtype = DType::kI8;
      d.a.int8_zero_point = a.has_zero_point();
      d.w = WeightFormat::int8();
      d.out_dtype = DType::kF32;
      const Gemm g(d, Device::cpu());
      ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message() << " " << d.describe();
      const PackedWeight p = g.pack(w);
      EXPECT_EQ(p.n, n);
      EXPECT_EQ(p.k, k);
      GemmArgs args;
      args.a = a.codes.data();
      args.a_scales = a.scales.data();
      args.a_zeros = a.has_zero_point() ? a.zeros.data() : nullptr;
      args.w = p.host_view();
      std::vector<float> out(static_cast<size_t>(m * n), std::numeric_limits<float>::quiet_NaN());
      args.out = out.data();
      std::vector<uint8_t> ws(g.workspace_size());
      const Status s = g.run(args, ws.data());
      ASSERT_TRUE(s.ok()) << s.message();

      std::vector<float> ref(out.size());
      bool nonzero = false;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < k; ++c)
            acc += static_cast<double>(a.dequant(i, c)) * static_cast<double>(w.dequant(j, c));
          ref[static_cast<size_t>(i * n + j)] = static_cast<float>(acc);
        }
      for (const float v : out) {
        ASSERT_TRUE(std::isfinite(v)) << d.describe();
        nonzero = nonzero || v != 0.0f;
      }
      EXPECT_TRUE(nonzero) << d.describe();
      EXPECT_LT(relative_error(out.data(), ref.data(), m * n), 1e-5) << d.describe();
    }
  }
}

// ---------------------------------------------------------------------------------------
// Small files written by SafetensorsWriter
// ---------------------------------------------------------------------------------------
using test::Part;
using test::floats;

// Integers stored in `dtype` (I8, U8, I16 or I32), little-endian.
Part ints(const std::string& name, std::vector<int64_t> shape, const std::vector<int32_t>& v,
          DType dtype = DType::kI8) {
  const size_t size = dtype_size(dtype);
  std::vector<uint8_t> bytes(v.size() * size);
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t b = 0; b < size; ++b)
      bytes[i * size + b] = static_cast<uint8_t>(static_cast<uint32_t>(v[i]) >> (8 * b));
  return {name, dtype, std::move(shape), std::move(bytes)};
}

// The parts written to a file of its own under LOWBIT_TEST_TMP_DIR, and a reader over it.
class TmpFile {
 public:
  explicit TmpFile(const std::vector<Part>& parts) : path_(next_path()), reader_(write(parts, path_)) {}
  const SafetensorsReader& operator*() const { return reader_; }
  const std::string& path() const { return path_; }

 private:
  static std::string next_path() {
    static int counter = 0;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::string(LOWBIT_TEST_TMP_DIR) + "/import_int8_" + info->name() + "_" +
           std::to_string(counter++) + ".safetensors";
  }
  static SafetensorsReader write(const std::vector<Part>& parts, const std::string& path) {
    SafetensorsWriter w;
    for (const Part& p : parts) w.add(p.name, p.dtype, p.shape, p.bytes.data(), p.bytes.size());
    w.write(path);
    return SafetensorsReader::open(path);
  }
  std::string path_;
  SafetensorsReader reader_;
};

TEST(import_int8, memory_per_tensor_broadcasts_to_every_row) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{}, std::vector<int64_t>{1}})
    for (DType sdt : {DType::kF32, DType::kBF16, DType::kF16}) {
      SCOPED_TRACE(std::to_string(shape.size()) + "-D " + dtype_name(sdt));
      const TmpFile f({ints("w.weight", {3, 2}, {-128, 127, 0, 1, -1, 5}),
                       floats("w.weight_scale", shape, {0.75f}, sdt),
                       floats("w.input_scale", {1}, {0.25f}, DType::kBF16),
                       ints("w.input_zero_point", {}, {-128})});
      const Int8Import imp = import_int8(*f, "w.weight");
      EXPECT_EQ(imp.source.convention, Int8Convention::kPerTensor);
      EXPECT_EQ(imp.weight.scales, (std::vector<float>{0.75f, 0.75f, 0.75f}));
      EXPECT_EQ(imp.weight.codes, (std::vector<int8_t>{-128, 127, 0, 1, -1, 5}));
      EXPECT_EQ(imp.weight.dequant(0, 0), -96.0f);
      EXPECT_EQ(imp.weight.dequant(0, 1), 95.25f);
      EXPECT_EQ(imp.weight.dequant(2, 1), 3.75f);
      EXPECT_EQ(imp.input_scale, std::optional<float>(0.25f));
      EXPECT_EQ(imp.input_zero_point, std::optional<int32_t>(-128));
    }
}

TEST(import_int8, memory_per_channel_both_shapes_and_scale_dtypes) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{3, 1}, std::vector<int64_t>{3}})
    for (DType sdt : {DType::kF32, DType::kBF16, DType::kF16}) {
      SCOPED_TRACE(std::to_string(shape.size()) + "-D " + dtype_name(sdt));
      const TmpFile f({ints("p.weight", {3, 2}, {1, 2, 1, 2, 1, -1}),
                       floats("p.weight_scale", shape, {0.5f, 0.25f, 3.0f}, sdt)});
      const Int8Import imp = import_int8(*f, "p.weight");
      EXPECT_EQ(imp.source.convention, Int8Convention::kPerChannel);
      EXPECT_EQ(imp.weight.dequant(0, 1), 1.0f);
      EXPECT_EQ(imp.weight.dequant(1, 0), 0.25f);
      EXPECT_EQ(imp.weight.dequant(2, 1), -3.0f);
      EXPECT_FALSE(imp.input_scale.has_value());
      EXPECT_FALSE(imp.input_zero_point.has_value());
    }
  // n = 1: [1] is read as per-tensor, [1, 1] as per-channel; both mean the same W.
  const TmpFile a({ints("weight", {1, 2}, {1, 2}), floats("weight_scale", {1}, {2.0f})});
  const TmpFile b({ints("weight", {1, 2}, {1, 2}), floats("weight_scale", {1, 1}, {2.0f})});
  EXPECT_EQ(import_int8(*a, "weight").source.convention, Int8Convention::kPerTensor);
  EXPECT_EQ(import_int8(*b, "weight").source.convention, Int8Convention::kPerChannel);
  EXPECT_EQ(import_int8(*a, "weight").weight.dequant(0, 1), 4.0f);
  EXPECT_EQ(import_int8(*b, "weight").weight.dequant(0, 1), 4.0f);
}

TEST(import_int8, memory_all_zero_weight_zero_points_are_accepted) {
  struct Case {
    std::vector<int64_t> scale_shape, zp_shape;
    DType zp_dtype;
  };
  const Case cases[] = {{{2, 1}, {2, 1}, DType::kI8}, {{2, 1}, {2}, DType::kI32},
                        {{2}, {2, 1}, DType::kI32}, {{}, {}, DType::kI8},
                        {{1}, {}, DType::kI32},     {{}, {1}, DType::kI8}};
  for (const Case& c : cases) {
    SCOPED_TRACE(dtype_name(c.zp_dtype));
    const int64_t count = c.scale_shape.empty() || c.scale_shape[0] == 1 ? 1 : 2;
    const int64_t zp_count = c.zp_shape.empty() || c.zp_shape[0] == 1 ? 1 : 2;
    const TmpFile f({ints("w.weight", {2, 2}, {3, -3, 7, -7}),
                     floats("w.weight_scale", c.scale_shape, std::vector<float>(count, 0.5f)),
                     ints("w.weight_zero_point", c.zp_shape, std::vector<int32_t>(zp_count, 0),
                          c.zp_dtype)});
    const Int8Import imp = import_int8(*f, "w.weight");
    EXPECT_EQ(imp.source.zero_point, "w.weight_zero_point");
    EXPECT_FALSE(imp.weight.has_zero_point());
    EXPECT_EQ(imp.weight.dequant(1, 1), -3.5f);
  }
}

TEST(import_int8, memory_input_zero_point_extremes_and_dtypes) {
  for (const auto& [z, dt] : {std::pair<int32_t, DType>{-128, DType::kI8}, {127, DType::kI8},
                              {-128, DType::kI32}, {127, DType::kI32}, {0, DType::kI32}}) {
    SCOPED_TRACE(std::to_string(z) + " " + dtype_name(dt));
    const TmpFile f({ints("weight", {1, 1}, {1}), floats("weight_scale", {}, {1}),
                     floats("input_scale", {}, {0.5f}, DType::kF16), ints("input_zero_point", {1}, {z}, dt)});
    const Int8Import imp = import_int8(*f, "weight");
    EXPECT_EQ(imp.input_zero_point, std::optional<int32_t>(z));
    EXPECT_EQ(imp.input_scale, std::optional<float>(0.5f));
  }
}

TEST(import_int8, memory_names_and_companions) {
  EXPECT_EQ(int8_companion_names("a.b.weight"),
            (std::vector<std::string>{"a.b.weight_scale", "a.b.weight_zero_point",
                                      "a.b.input_scale", "a.b.input_zero_point"}));
  EXPECT_EQ(int8_companion_names("weight"),
            (std::vector<std::string>{"weight_scale", "weight_zero_point", "input_scale",
                                      "input_zero_point"}));
  // A name that does not end in "weight" has no input companions.
  EXPECT_EQ(int8_companion_names("w"), (std::vector<std::string>{"w_scale", "w_zero_point"}));
  const TmpFile f({ints("w", {1, 2}, {1, 2}), floats("w_scale", {}, {1.0f}),
                   floats("input_scale", {}, {-5.0f}), ints("input_zero_point", {}, {9}, DType::kI32)});
  const Int8Import imp = import_int8(*f, "w");  // input_* are not w's: ignored
  EXPECT_FALSE(imp.input_scale.has_value());
  EXPECT_FALSE(imp.input_zero_point.has_value());

  // Listed: 2-D I8 tensors with a _scale, in file order, no companions of listed weights.
  const TmpFile g({ints("a.weight", {2, 2}, {1, 1, 1, 1}), floats("a.weight_scale", {}, {1.0f}),
                   ints("a.weight_zero_point", {2, 1}, {0, 0}),
                   floats("a.weight_zero_point_scale", {}, {1.0f}),  // makes the zp a candidate
                   ints("b.weight", {4}, {1, 1, 1, 1}), floats("b.weight_scale", {}, {1.0f}),
                   floats("c.weight", {1, 1}, {1.0f}, DType::kF16), floats("c.weight_scale", {}, {1.0f}),
                   ints("d.weight", {1, 1}, {1}),
                   ints("e.weight", {1, 3}, {1, 2, 3}), floats("e.weight_scale", {1, 1}, {1.0f})});
  EXPECT_EQ(int8_weight_names(*g), (std::vector<std::string>{"a.weight", "e.weight"}));
  expect_error([&] { (void)import_int8(*g, "b.weight"); }, g.path(), "b.weight",
               {"wrong rank", "actual shape [4]"});
  expect_error([&] { (void)import_int8(*g, "c.weight"); }, g.path(), "c.weight",
               {"wrong dtype (expected I8 vs actual F16)"});
  expect_error([&] { (void)import_int8(*g, "d.weight"); }, g.path(), "d.weight",
               {"missing scale", "'d.weight_scale'"});
  expect_error([&] { (void)import_int8(*g, "nope"); }, g.path(), "nope", {"no such tensor"});
}

TEST(import_int8, memory_bad_shapes_and_dtypes) {
  struct Case {
    std::vector<Part> parts;
    std::vector<std::string> needles;
  };
  const std::vector<int32_t> four = {1, 2, 3, 4};
  const std::vector<Case> cases = {
      {{ints("w", {2, 2}, four, DType::kI32), floats("w_scale", {}, {1})},
       {"wrong dtype (expected I8 vs actual I32)"}},
      {{ints("w", {2, 2}, four, DType::kU8), floats("w_scale", {}, {1})}, {"actual U8"}},
      {{ints("w", {4, 0}, {}), floats("w_scale", {}, {1})}, {"is empty", "[4, 0]"}},
      {{ints("w", {2, 2}, four), floats("w_scale", {1, 2}, {1, 1})},
       {"scale 'w_scale' has a shape no strategy has", "[2, 1] or [2] per-channel", "actual [1, 2]"}},
      {{ints("w", {2, 2}, four), floats("w_scale", {2, 2}, {1, 1, 1, 1})},
       {"strategy \"group\"", "2 groups along k=2"}},
      {{ints("w", {2, 2}, four), floats("w_scale", {2, 3}, {1, 1, 1, 1, 1, 1})},
       {"shape no strategy has", "actual [2, 3]"}},
      {{ints("w", {2, 2}, four), floats("w_scale", {2, 1, 1}, {1, 1})},
       {"shape no strategy has", "actual [2, 1, 1]"}},
      {{ints("w", {2, 2}, four), ints("w_scale", {}, {1}, DType::kI32)},
       {"scale 'w_scale' has the wrong dtype (expected F32, BF16 or F16 vs actual I32)"}},
      {{ints("w", {2, 2}, four), floats("w_scale", {}, {1}), ints("w_zero_point", {}, {0}, DType::kI16)},
       {"zero point 'w_zero_point' has the wrong dtype (expected I8 or I32 vs actual I16)"}},
      {{ints("w", {2, 2}, four), floats("w_scale", {}, {1}), ints("w_zero_point", {2, 1}, {0, 0})},
       {"zero point 'w_zero_point' has the wrong shape", "[] or [1] per-tensor", "actual [2, 1]"}},
      {{ints("w", {2, 2}, four), floats("w_scale", {2}, {1, 1}), ints("w_zero_point", {}, {0})},
       {"zero point 'w_zero_point' has the wrong shape", "[2, 1] or [2] per-channel", "actual []"}},
      {{ints("weight", {1, 1}, {1}), floats("weight_scale", {}, {1}), floats("input_scale", {1, 1}, {1})},
       {"input scale 'input_scale' has the wrong shape", "actual [1, 1]"}},
      {{ints("weight", {1, 1}, {1}), floats("weight_scale", {}, {1}), ints("input_scale", {}, {1})},
       {"input scale 'input_scale' has the wrong dtype", "actual I8"}},
      {{ints("weight", {1, 1}, {1}), floats("weight_scale", {}, {1}), floats("input_scale", {}, {1}),
        floats("input_zero_point", {}, {0})},
       {"input zero point 'input_zero_point' has the wrong dtype", "actual F32"}},
      {{ints("weight", {1, 1}, {1}), floats("weight_scale", {}, {1}), floats("input_scale", {}, {1}),
        ints("input_zero_point", {2}, {0, 0})},
       {"input zero point 'input_zero_point' has the wrong shape", "actual [2]"}},
      {{ints("weight", {1, 1}, {1}), floats("weight_scale", {}, {1}), ints("input_zero_point", {}, {0})},
       {"input zero point 'input_zero_point' has no input scale 'input_scale'"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.needles[0]);
    const TmpFile f(c.parts);
    const std::string name = c.parts[0].name;
    expect_error([&] { (void)import_int8(*f, name); }, f.path(), name, c.needles);
    // The header-only detection refuses them too.
    expect_error([&] { (void)detect_int8(*f, name); }, f.path(), name, c.needles);
  }
}

TEST(import_int8, memory_bad_values) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::string asym = ": asymmetric int8 weights are not supported: the int8 GEMMs take "
                           "symmetric weights";
  struct Case {
    std::vector<Part> parts;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {{ints("w", {1, 2}, {1, 1}), floats("w_scale", {}, {nan})}, {"scale 'w_scale' is nan"}},
      {{ints("w", {1, 2}, {1, 1}), floats("w_scale", {1}, {-2})}, {"scale 'w_scale' is -2"}},
      {{ints("w", {2, 1}, {1, 1}), floats("w_scale", {2}, {1, -0.0f}, DType::kF16)},
       {"scale 'w_scale' at row 1 is -0"}},
      {{ints("w", {2, 1}, {1, 1}), floats("w_scale", {2, 1}, {inf, 1}, DType::kBF16)},
       {"at row 0 is inf"}},
      {{ints("w", {2, 1}, {1, 1}), floats("w_scale", {2, 1}, {1, 1}),
        ints("w_zero_point", {2, 1}, {0, -1}, DType::kI32)},
       {"zero point 'w_zero_point' at row 1 is -1" + asym}},
      {{ints("w", {2, 1}, {1, 1}), floats("w_scale", {}, {1}), ints("w_zero_point", {1}, {2})},
       {"zero point 'w_zero_point' is 2" + asym}},
      {{ints("weight", {1, 1}, {1}), floats("weight_scale", {}, {1}), floats("input_scale", {}, {inf})},
       {"input scale 'input_scale' is inf"}},
      {{ints("weight", {1, 1}, {1}), floats("weight_scale", {}, {1}), floats("input_scale", {1}, {-0.5f})},
       {"input scale 'input_scale' is -0.5"}},
      {{ints("weight", {1, 1}, {1}), floats("weight_scale", {}, {1}), floats("input_scale", {}, {1}),
        ints("input_zero_point", {}, {-129}, DType::kI32)},
       {"input zero point 'input_zero_point' is -129 (expected in [-128, 127]"}},
      {{ints("weight", {1, 1}, {1}), floats("weight_scale", {}, {1}), floats("input_scale", {}, {1}),
        ints("input_zero_point", {1}, {128}, DType::kI32)},
       {"input zero point 'input_zero_point' is 128"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.needles[0]);
    const TmpFile f(c.parts);
    const std::string name = c.parts[0].name;
    expect_error([&] { (void)import_int8(*f, name); }, f.path(), name, c.needles);
    // Values are import's business: detection alone, which reads no data, accepts them.
    EXPECT_NO_THROW((void)detect_int8(*f, name));
  }
}

}  // namespace
}  // namespace lowbit
