// compressed-tensors int8 W8A8 checkpoints -> canonical Int8Tensor (include/lowbit/import_int8.hpp
// states the strategies and the refusals).
//
// Why a per-tensor scale becomes per-channel: Int8Tensor holds one scale per row, and a
// per-tensor scale s is exactly the per-channel scales {s, s, ..., s} (the dequantized values
// code * s are the same fp32 products). vLLM does the same when it loads such a checkpoint
// for its channel-wise int8 kernels (convert_to_channelwise).
//
// Zero points: compressed-tensors writes NAME_zero_point for every quantized weight whose
// args carry one, also for symmetric ones (all zeros). Zeros change nothing and are accepted;
// any nonzero value would make the weight asymmetric, which Int8Tensor's weights, and so the
// int8 GEMMs, do not take.
#include "lowbit/import_int8.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <string_view>

#include "lowbit/status.hpp"
#include "host/import_common.hpp"

namespace lowbit {
namespace {

constexpr std::string_view kWeightSuffix = "weight";

bool is_int_zero_point(DType t) { return t == DType::kI8 || t == DType::kI32; }

using import_detail::float_text;
using import_detail::is_scalar_shape;
using import_detail::printable;
using import_detail::shape_text;

// The shapes a strategy gives a scale or weight zero point of a weight with n rows.
bool has_strategy_shape(Int8Convention c, const std::vector<int64_t>& shape, int64_t n) {
  if (c == Int8Convention::kPerTensor) return is_scalar_shape(shape);
  return shape == std::vector<int64_t>{n, 1} || shape == std::vector<int64_t>{n};
}

std::string strategy_shapes(Int8Convention c, int64_t n) {
  if (c == Int8Convention::kPerTensor) return "[] or [1] per-tensor";
  const std::string rows = std::to_string(n);
  return "[" + rows + ", 1] or [" + rows + "] per-channel";
}

// Every message: "lowbit: FILE: int8 weight 'NAME': problem".
class Refusal : public import_detail::Checker {
 public:
  Refusal(const SafetensorsReader& file, const std::string& weight) : import_detail::Checker(file, weight, "int8") {}

  // "scale 'P.weight_scale'": a companion as messages name it.
  static std::string named(const char* role, const TensorInfo& t) { return std::string(role) + " " + quoted(t.name); }

  void expect_int_zero_point(const TensorInfo& t, const char* role) const {
    if (!is_int_zero_point(t.dtype))
      fail(named(role, t) + " has the wrong dtype (expected I8 or I32 vs actual " +
           dtype_safetensors_name(t.dtype) + ")");
  }

  // The values of an I8 or I32 tensor (dtype checked before). safetensors stores I32
  // little-endian and data(t) is not necessarily aligned: assembled byte by byte.
  std::vector<int32_t> integers(const TensorInfo& t) const {
    const uint8_t* bytes = file_.data(t);
    std::vector<int32_t> values(static_cast<std::size_t>(t.numel()));
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (t.dtype == DType::kI8) {
        values[i] = static_cast<int8_t>(bytes[i]);
      } else {
        uint32_t u = 0;
        for (int b = 0; b < 4; ++b) u |= static_cast<uint32_t>(bytes[4 * i + b]) << (8 * b);
        int32_t v;
        std::memcpy(&v, &u, sizeof v);
        values[i] = v;
      }
    }
    return values;
  }

};

}  // namespace

const char* int8_convention_name(Int8Convention c) {
  switch (c) {
    case Int8Convention::kPerTensor: return "per-tensor";
    case Int8Convention::kPerChannel: return "per-channel";
  }
  return "invalid";
}

std::vector<std::string> int8_companion_names(const std::string& weight_name) {
  std::vector<std::string> out = {weight_name + "_scale", weight_name + "_zero_point"};
  // "P.weight" -> "P.input_scale", "P.input_zero_point"; a bare "weight" -> "input_scale", ...
  if (import_detail::ends_with(weight_name, kWeightSuffix)) {
    const std::string prefix = weight_name.substr(0, weight_name.size() - kWeightSuffix.size());
    out.push_back(prefix + "input_scale");
    out.push_back(prefix + "input_zero_point");
  }
  return out;
}

std::vector<std::string> int8_weight_names(const SafetensorsReader& file) {
  std::vector<std::string> candidates;
  std::set<std::string> companions;
  for (const TensorInfo& t : file.tensors()) {
    if (t.dtype != DType::kI8 || t.shape.size() != 2 || file.find(t.name + "_scale") == nullptr)
      continue;
    candidates.push_back(t.name);
    for (std::string& c : int8_companion_names(t.name)) companions.insert(std::move(c));
  }
  std::vector<std::string> out;
  for (std::string& name : candidates)
    if (companions.count(name) == 0) out.push_back(std::move(name));
  return out;
}

Int8Source detect_int8(const SafetensorsReader& file, const std::string& weight_name) {
  const Refusal refuse(file, weight_name);
  const TensorInfo* w = file.find(weight_name);
  if (w == nullptr) refuse.fail("no such tensor in the file");
  const std::vector<std::string> names = int8_companion_names(weight_name);
  if (w->dtype != DType::kI8)
    refuse.fail(std::string("has the wrong dtype (expected I8 vs actual ") +
                dtype_safetensors_name(w->dtype) +
                "): compressed-tensors int8 checkpoints store signed int8 codes");
  const TensorInfo* scale = file.find(names[0]);
  if (scale == nullptr)
    refuse.fail("missing scale: no '" + printable(names[0]) +
                "' next to this I8 weight, so its values are unknown");
  if (w->shape.size() != 2)
    refuse.fail("has the wrong rank (expected 2-D (n, k) vs actual shape " + shape_text(w->shape) + ")");

  Int8Source src;
  src.weight = weight_name;
  src.scale = scale->name;
  src.n = w->shape[0];
  src.k = w->shape[1];
  if (src.n == 0 || src.k == 0) refuse.fail("is empty (shape " + shape_text(w->shape) + ")");

  refuse.expect_scale_dtype(*scale, "scale");
  if (is_scalar_shape(scale->shape)) {
    src.convention = Int8Convention::kPerTensor;
  } else if (has_strategy_shape(Int8Convention::kPerChannel, scale->shape, src.n)) {
    src.convention = Int8Convention::kPerChannel;
  } else {
    const std::string expected = "expected " + strategy_shapes(Int8Convention::kPerTensor, src.n) +
                                 ", " + strategy_shapes(Int8Convention::kPerChannel, src.n) +
                                 " vs actual " + shape_text(scale->shape);
    const std::vector<int64_t>& s = scale->shape;
    if (s.size() == 2 && s[0] == src.n && s[1] > 1 && s[1] <= src.k)
      refuse.fail(Refusal::named("scale", *scale) + " has shape " + shape_text(s) +
                  ", compressed-tensors strategy \"group\" (" + std::to_string(s[1]) +
                  " groups along k=" + std::to_string(src.k) + "), which is not supported: its "
                  "group size lives in config.json and the int8 GEMMs take one scale per "
                  "channel (" + expected + ")");
    refuse.fail(Refusal::named("scale", *scale) + " has a shape no strategy has (" + expected +
                ")");
  }

  if (const TensorInfo* zp = file.find(names[1])) {
    refuse.expect_int_zero_point(*zp, "zero point");
    if (!has_strategy_shape(src.convention, zp->shape, src.n))
      refuse.fail(Refusal::named("zero point", *zp) + " has the wrong shape (expected " +
                  strategy_shapes(src.convention, src.n) + " like the scale vs actual " +
                  shape_text(zp->shape) + ")");
    src.zero_point = zp->name;
  }

  if (names.size() > 2) {
    const TensorInfo* in_scale = file.find(names[2]);
    if (in_scale != nullptr) {
      refuse.expect_scale_dtype(*in_scale, "input scale");
      if (!is_scalar_shape(in_scale->shape))
        refuse.fail(Refusal::named("input scale", *in_scale) + " has the wrong shape (expected " +
                    "[] or [1], a static per-tensor activation scale, vs actual " +
                    shape_text(in_scale->shape) + ")");
      src.input_scale = in_scale->name;
    }
    if (const TensorInfo* in_zp = file.find(names[3])) {
      refuse.expect_int_zero_point(*in_zp, "input zero point");
      if (!is_scalar_shape(in_zp->shape))
        refuse.fail(Refusal::named("input zero point", *in_zp) + " has the wrong shape " +
                    "(expected [] or [1], a static per-tensor activation zero point, vs actual " +
                    shape_text(in_zp->shape) + ")");
      if (in_scale == nullptr)
        refuse.fail(Refusal::named("input zero point", *in_zp) + " has no input scale '" +
                    printable(names[2]) + "' (a static zero point needs its static scale)");
      src.input_zero_point = in_zp->name;
    }
  }
  return src;
}

Int8Import import_int8(const SafetensorsReader& file, const std::string& weight_name) {
  Int8Import out;
  out.source = detect_int8(file, weight_name);
  const Int8Source& src = out.source;
  const Refusal refuse(file, weight_name);
  const bool per_channel = src.convention == Int8Convention::kPerChannel;
  const auto at_row = [per_channel](int64_t i) {
    return per_channel ? " at row " + std::to_string(i) : std::string();
  };

  Int8Tensor& t = out.weight;
  t.rows = src.n;
  t.cols = src.k;
  // Codes: the reader guarantees nbytes == n * k (one byte each) inside the mapped file.
  const TensorInfo& w = file.at(src.weight);
  t.codes.resize(static_cast<std::size_t>(w.nbytes()));
  std::memcpy(t.codes.data(), file.data(w), t.codes.size());

  const std::vector<float> scales = refuse.positive_scales(file.at(src.scale), "scale", at_row);
  t.scales = per_channel ? scales : std::vector<float>(static_cast<std::size_t>(t.rows), scales[0]);

  if (!src.zero_point.empty()) {
    const TensorInfo& zp = file.at(src.zero_point);
    const std::vector<int32_t> zeros = refuse.integers(zp);
    for (std::size_t i = 0; i < zeros.size(); ++i)
      if (zeros[i] != 0)
        refuse.fail(Refusal::named("zero point", zp) + at_row(static_cast<int64_t>(i)) + " is " +
                    std::to_string(zeros[i]) + ": asymmetric int8 weights are not supported: " +
                    "the int8 GEMMs take symmetric weights");
  }

  if (!src.input_scale.empty())
    out.input_scale = refuse.positive_scales(file.at(src.input_scale), "input scale",
                                      [](int64_t) { return std::string(); })[0];
  if (!src.input_zero_point.empty()) {
    const TensorInfo& zp = file.at(src.input_zero_point);
    const int32_t z = refuse.integers(zp)[0];
    if (z < -128 || z > 127)
      refuse.fail(Refusal::named("input zero point", zp) + " is " + std::to_string(z) +
                  " (expected in [-128, 127], the range of int8 activation codes)");
    out.input_zero_point = z;
  }

  // Everything validate() checks was checked above with the checkpoint's names; this keeps
  // the promise that an imported tensor is as valid as a quantized one if that ever drifts.
  if (const Status s = t.validate(); !s.ok()) {
    constexpr std::string_view kPrefix = "lowbit: ";
    std::string_view problem = s.message();
    if (problem.substr(0, kPrefix.size()) == kPrefix) problem.remove_prefix(kPrefix.size());
    refuse.fail(std::string(problem));
  }
  return out;
}

}  // namespace lowbit
