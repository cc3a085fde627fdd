// fp8 checkpoint conventions -> canonical Fp8Tensor (include/lowbit/import_fp8.hpp states the
// conventions and the refusals).
//
// Why DeepSeek-V3's `weight_scale_inv` multiplies: the only dequantization in its reference
// code, inference/kernel.py `weight_dequant` (github.com/deepseek-ai/DeepSeek-V3), launches one
// program per 128x128 block (pid_m, pid_n), loads s = scale_inv[pid_m * cdiv(N, 128) + pid_n]
// and stores y = x * s; inference/fp8_cast_bf16.py applies it as
// weight_dequant(weight, get_tensor(weight_name + "_scale_inv")). The "inv" refers to the
// quantizer's x / s, not to how the stored value is used. The same kernel masks rows >= M and
// columns >= N, which is why partial edge blocks are allowed here.
#include "lowbit/import_fp8.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>

#include "lowbit/status.hpp"
#include "host/import_common.hpp"

namespace lowbit {
namespace {

bool is_fp8(DType t) { return t == DType::kE4M3 || t == DType::kE5M2; }

int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

using import_detail::ends_with;
using import_detail::float_text;
using import_detail::is_scalar_shape;
using import_detail::printable;
using import_detail::scale_dtype_ok;
using import_detail::shape_text;

// Every message: "lowbit: FILE: fp8 weight 'NAME': problem".
class Checker : public import_detail::Checker {
 public:
  Checker(const SafetensorsReader& file, const std::string& weight) : import_detail::Checker(file, weight, "fp8") {}
};

}  // namespace

const char* fp8_convention_name(Fp8Convention c) {
  switch (c) {
    case Fp8Convention::kPerTensor: return "per-tensor";
    case Fp8Convention::kPerChannel: return "per-channel";
    case Fp8Convention::kBlock128: return "deepseek-128x128";
  }
  return "invalid";
}

Fp8Scaling fp8_convention_scaling(Fp8Convention c) {
  switch (c) {
    case Fp8Convention::kPerChannel: return Fp8Scaling::kPerRow;
    case Fp8Convention::kBlock128: return Fp8Scaling::kBlock128x128;
    default: return Fp8Scaling::kPerTensor;
  }
}

std::vector<std::string> fp8_companion_names(const std::string& weight_name) {
  std::vector<std::string> out = {weight_name + "_scale", weight_name + "_scale_inv"};
  // "P.weight" -> "P.input_scale"; a bare "weight" -> "input_scale".
  constexpr std::string_view kWeight = "weight";
  if (ends_with(weight_name, kWeight))
    out.push_back(weight_name.substr(0, weight_name.size() - kWeight.size()) + "input_scale");
  return out;
}

std::vector<std::string> fp8_weight_names(const SafetensorsReader& file) {
  std::vector<std::string> candidates;
  std::set<std::string> companions;
  for (const TensorInfo& t : file.tensors()) {
    if (!is_fp8(t.dtype) && file.find(t.name + "_scale_inv") == nullptr) continue;
    candidates.push_back(t.name);
    for (std::string& c : fp8_companion_names(t.name)) companions.insert(std::move(c));
  }
  // An fp8-typed scale is a bad companion of its weight, not a weight of its own: leaving it
  // out makes import_fp8() of the weight report the real problem (the scale's dtype).
  std::vector<std::string> out;
  for (std::string& name : candidates)
    if (!companions.count(name)) out.push_back(std::move(name));
  return out;
}

Fp8Source detect_fp8(const SafetensorsReader& file, const std::string& weight_name) {
  const Checker check(file, weight_name);
  const TensorInfo* w = file.find(weight_name);
  if (w == nullptr) check.fail("no such tensor in the file");
  const std::vector<std::string> names = fp8_companion_names(weight_name);
  const TensorInfo* scale = file.find(names[0]);
  const TensorInfo* scale_inv = file.find(names[1]);
  if (scale != nullptr && scale_inv != nullptr)
    check.fail("both " + check.quoted(names[0]) + " and " + check.quoted(names[1]) +
               " are present (expected one scale companion: _scale for the per-tensor and "
               "per-channel conventions, _scale_inv for DeepSeek-V3 blocks)");
  if (w->dtype != DType::kE4M3)
    check.fail(std::string("has the wrong dtype (expected F8_E4M3 vs actual ") +
               dtype_safetensors_name(w->dtype) + "): the supported fp8 checkpoint conventions "
               "store e4m3fn codes");
  if (scale == nullptr && scale_inv == nullptr)
    check.fail("missing scale: no " + check.quoted(names[0]) + " or " + check.quoted(names[1]) +
               " next to this F8_E4M3 weight, so its values are unknown");
  if (w->shape.size() != 2)
    check.fail("has the wrong rank (expected 2-D (n, k) vs actual shape " +
               shape_text(w->shape) + ")");

  Fp8Source src;
  src.weight = weight_name;
  src.n = w->shape[0];
  src.k = w->shape[1];
  if (src.n == 0 || src.k == 0) check.fail("is empty (shape " + shape_text(w->shape) + ")");
  const std::vector<int64_t> blocks = {ceil_div(src.n, kFp8Block), ceil_div(src.k, kFp8Block)};

  const TensorInfo& s = scale != nullptr ? *scale : *scale_inv;
  src.scale = s.name;
  check.expect_scale_dtype(s, "scale");
  if (scale_inv != nullptr) {
    if (s.shape != blocks)
      check.fail("scale " + check.quoted(s.name) + " has the wrong shape (expected " +
                 shape_text(blocks) + " = (ceil(n/128), ceil(k/128)) for n=" +
                 std::to_string(src.n) + ", k=" + std::to_string(src.k) + " vs actual " +
                 shape_text(s.shape) + ")");
    src.convention = Fp8Convention::kBlock128;
  } else if (is_scalar_shape(s.shape)) {
    src.convention = Fp8Convention::kPerTensor;
  } else if (s.shape == std::vector<int64_t>{src.n, 1} ||
             s.shape == std::vector<int64_t>{src.n}) {
    src.convention = Fp8Convention::kPerChannel;
  } else {
    std::string hint;
    if (s.shape == blocks)
      hint = "; a 128x128 block grid must be named " + check.quoted(names[1]) +
             " (DeepSeek-V3): under _scale its block size would be in config.json";
    check.fail("scale " + check.quoted(s.name) + " has a shape no convention has (expected [] " +
               "or [1] per-tensor, [" + std::to_string(src.n) + ", 1] or [" +
               std::to_string(src.n) + "] per-channel vs actual " + shape_text(s.shape) + ")" +
               hint);
  }

  if (names.size() > 2) {
    if (const TensorInfo* in = file.find(names[2])) {
      check.expect_scale_dtype(*in, "input scale");
      if (!is_scalar_shape(in->shape))
        check.fail("input scale " + check.quoted(in->name) + " has the wrong shape (expected [] " +
                   "or [1], a static per-tensor activation scale, vs actual " +
                   shape_text(in->shape) + ")");
      src.input_scale = in->name;
    }
  }
  return src;
}

Fp8Import import_fp8(const SafetensorsReader& file, const std::string& weight_name) {
  Fp8Import out;
  out.source = detect_fp8(file, weight_name);
  const Fp8Source& src = out.source;
  const Checker check(file, weight_name);

  Fp8Tensor& t = out.weight;
  t.format.dtype = DType::kE4M3;
  t.format.scaling = fp8_convention_scaling(src.convention);
  t.rows = src.n;
  t.cols = src.k;

  // Codes: the reader guarantees nbytes == n * k (one byte each) inside the mapped file.
  const TensorInfo& w = file.at(weight_name);
  const uint8_t* codes = file.data(w);
  t.codes.assign(codes, codes + w.nbytes());
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c) {
      const uint8_t code = t.codes[static_cast<std::size_t>(r * t.cols + c)];
      if ((code & 0x7F) == 0x7F) {  // S.1111.111: e4m3fn's only NaN, it has no infinity
        char buf[96];
        std::snprintf(buf, sizeof buf, "NaN code 0x%02x at row %" PRId64 ", col %" PRId64, code,
                      r, c);
        check.fail(std::string(buf) + " (expected finite e4m3 codes)");
      }
    }

  const int64_t scale_cols = src.convention == Fp8Convention::kBlock128 ? ceil_div(src.k, kFp8Block) : 1;
  t.scales = check.positive_scales(file.at(src.scale), "scale", [&](int64_t i) -> std::string {
    switch (src.convention) {
      case Fp8Convention::kPerChannel: return " at row " + std::to_string(i);
      case Fp8Convention::kBlock128:
        return " at block (" + std::to_string(i / scale_cols) + ", " +
               std::to_string(i % scale_cols) + ")";
      default: return "";
    }
  });
  if (!src.input_scale.empty())
    out.input_scale = check.positive_scales(file.at(src.input_scale), "input scale",
                                            [](int64_t) { return std::string(); })[0];

  // Everything validate() checks was checked above with the checkpoint's names; this keeps
  // the promise that an imported tensor is as valid as a quantized one if that ever drifts.
  if (const Status s = t.validate(); !s.ok()) {
    constexpr std::string_view kPrefix = "lowbit: ";
    const std::string& m = s.message();
    check.fail(m.compare(0, kPrefix.size(), kPrefix) == 0 ? m.substr(kPrefix.size()) : m);
  }
  return out;
}

std::optional<Fp8Tensor> fp8_rescale_exact(const Fp8Tensor& t, Fp8Scaling target) {
  throw_if_error(t.validate());
  Fp8Tensor out;
  out.format = t.format;
  out.format.scaling = target;
  out.rows = t.rows;
  out.cols = t.cols;
  // Rows and columns that one scale cell covers under a scaling (the last cell may be cut).
  const auto cell = [&](Fp8Scaling s) -> std::pair<int64_t, int64_t> {
    switch (s) {
      case Fp8Scaling::kPerRow: return {1, t.cols};
      case Fp8Scaling::kBlock1x128: return {1, kFp8Block};
      case Fp8Scaling::kBlock128x128: return {kFp8Block, kFp8Block};
      default: return {t.rows, t.cols};
    }
  };
  const auto [src_br, src_bc] = cell(t.format.scaling);
  const auto [dst_br, dst_bc] = cell(target);
  const int64_t src_sc = t.scale_cols();
  const int64_t dst_sr = out.scale_rows(), dst_sc = out.scale_cols();
  out.scales.resize(static_cast<std::size_t>(dst_sr * dst_sc));
  for (int64_t i = 0; i < dst_sr; ++i)
    for (int64_t j = 0; j < dst_sc; ++j) {
      // Source cells overlapping target cell (i, j): rows [r0, r1], columns [c0, c1].
      const int64_t r0 = i * dst_br, r1 = std::min(r0 + dst_br, t.rows) - 1;
      const int64_t c0 = j * dst_bc, c1 = std::min(c0 + dst_bc, t.cols) - 1;
      const float first = t.scales[static_cast<std::size_t>((r0 / src_br) * src_sc + c0 / src_bc)];
      for (int64_t si = r0 / src_br; si <= r1 / src_br; ++si)
        for (int64_t sj = c0 / src_bc; sj <= c1 / src_bc; ++sj)
          if (t.scales[static_cast<std::size_t>(si * src_sc + sj)] != first) return std::nullopt;
      out.scales[static_cast<std::size_t>(i * dst_sc + j)] = first;
    }
  out.codes = t.codes;
  return out;
}

}  // namespace lowbit
