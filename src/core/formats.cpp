// lowbit: format names, validation and element access of the canonical unpacked forms.
#include "lowbit/formats.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "lowbit/numeric.hpp"

namespace lowbit {
namespace {

// printf into a std::string, prefixed with "lowbit: ".
template <typename... Args>
Status fail(const char* fmt, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return Status::Fail(std::string("lowbit: ") + buf);
}

// Exact text of a float in messages: shortest round-trip decimal plus its hex form.
std::string float_text(float f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g (%a)", static_cast<double>(f), static_cast<double>(f));
  return buf;
}

bool is_scale_dtype(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32;
}

// Checks rows, cols > 0 and rows * cols fits int64 (and so size_t on 64-bit hosts).
Status check_shape(const char* operand, const char* rows_name, int64_t rows,
                   const char* cols_name, int64_t cols, const std::string& fmt_name) {
  if (rows <= 0 || cols <= 0)
    return fail("%s shape %s=%" PRId64 ", %s=%" PRId64 " is empty or negative, expected both > 0 (%s)",
                operand, rows_name, rows, cols_name, cols, fmt_name.c_str());
  if (rows > std::numeric_limits<int64_t>::max() / cols ||
      static_cast<uint64_t>(rows * cols) > std::numeric_limits<size_t>::max() / sizeof(float))
    return fail("%s shape %s=%" PRId64 " x %s=%" PRId64 " overflows the element count (%s)",
                operand, rows_name, rows, cols_name, cols, fmt_name.c_str());
  return Status::Ok();
}

Status check_size(const char* operand, const char* array, size_t actual, int64_t expected,
                  const char* how, const std::string& fmt_name) {
  if (actual != static_cast<uint64_t>(expected))
    return fail("%s %s has %zu elements, expected %s = %" PRId64 " (%s)", operand, array,
                actual, how, expected, fmt_name.c_str());
  return Status::Ok();
}

// Parses a decimal integer without sign or leading zeros; advances `text`.
std::optional<int> parse_int(std::string_view& text) {
  size_t i = 0;
  int value = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (i == 1 && text[0] == '0') return std::nullopt;  // leading zero
    if (value > 100000) return std::nullopt;
    value = value * 10 + (text[i] - '0');
    ++i;
  }
  if (i == 0) return std::nullopt;
  text.remove_prefix(i);
  return value;
}

bool consume(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

}  // namespace

// =======================================================================================
// IntWeightFormat
// =======================================================================================
Status IntWeightFormat::validate() const {
  const std::string nm = name();
  if (bits < 1 || bits > 8)
    return fail("format bits=%d is out of range, expected 1..8 (%s)", bits, nm.c_str());
  if (group_size != 0 && group_size != 32 && group_size != 64 && group_size != 128)
    return fail("format group_size=%d is not supported, expected 32, 64, 128 or 0 "
                "(per-channel) (%s)", group_size, nm.c_str());
  if (zero != ZeroPoint::kSymmetric && zero != ZeroPoint::kInteger && zero != ZeroPoint::kFloat)
    return fail("format zero point mode %d is not valid, expected symmetric, integer or float (%s)",
                static_cast<int>(zero), nm.c_str());
  if (!is_scale_dtype(scale_dtype))
    return fail("format scale_dtype=%s is not supported, expected f16, bf16 or f32 (%s)",
                dtype_name(scale_dtype), nm.c_str());
  if (act_order && group_size == 0)
    return fail("format act_order needs a group size, got per-channel (%s)", nm.c_str());
  return Status::Ok();
}

std::string IntWeightFormat::name() const {
  std::string s = "w" + std::to_string(bits);
  if (group_size != 0) s += "g" + std::to_string(group_size);
  if (zero == ZeroPoint::kInteger) s += "-asym";
  if (zero == ZeroPoint::kFloat) s += "-fzp";
  if (act_order) s += "-act";
  return s;
}

std::optional<IntWeightFormat> IntWeightFormat::parse(std::string_view text) {
  IntWeightFormat f;
  f.zero = ZeroPoint::kSymmetric;
  f.group_size = 0;
  f.act_order = false;
  if (!consume(text, "w")) return std::nullopt;
  const auto bits = parse_int(text);
  if (!bits) return std::nullopt;
  f.bits = *bits;
  if (consume(text, "g")) {
    const auto group = parse_int(text);
    if (!group || *group == 0) return std::nullopt;
    f.group_size = *group;
  }
  if (consume(text, "-asym")) {
    f.zero = ZeroPoint::kInteger;
  } else if (consume(text, "-fzp")) {
    f.zero = ZeroPoint::kFloat;
  }
  if (consume(text, "-act")) f.act_order = true;
  if (!text.empty() || !f.validate().ok()) return std::nullopt;
  return f;
}

// =======================================================================================
// IntWeight
// =======================================================================================
int64_t IntWeight::groups() const {
  return format.group_size == 0 ? 1 : k / format.group_size;
}

float IntWeight::zero_of(int64_t row, int64_t group) const {
  const size_t i = static_cast<size_t>(row * groups() + group);
  switch (format.zero) {
    case ZeroPoint::kInteger: return static_cast<float>(zeros[i]);
    case ZeroPoint::kFloat: return zeros_f[i];
    default: return static_cast<float>(format.symmetric_zero());
  }
}

float IntWeight::dequant(int64_t row, int64_t col) const {
  // Same expression as dequantize_int_rows() (src/cpu/reference.cpp): (q - z) * s in fp32.
  const int64_t g = group_of(col);
  const float q = static_cast<float>(codes[static_cast<size_t>(row * k + col)]);
  return (q - zero_of(row, g)) * scales[static_cast<size_t>(row * groups() + g)];
}

Status IntWeight::validate() const {
  if (Status s = format.validate(); !s.ok()) return s;
  const std::string nm = format.name();
  const char* fn = nm.c_str();
  if (Status s = check_shape("weight", "N", n, "K", k, nm); !s.ok()) return s;
  if (format.group_size != 0 && k % format.group_size != 0)
    return fail("weight K=%" PRId64 " is not a multiple of group_size=%d (%s)", k,
                format.group_size, fn);
  const int64_t g = groups();
  if (Status s = check_size("weight", "codes", codes.size(), n * k, "N*K", nm); !s.ok()) return s;
  if (Status s = check_size("weight", "scales", scales.size(), n * g, "N*groups", nm); !s.ok())
    return s;
  const bool int_zero = format.zero == ZeroPoint::kInteger;
  const bool float_zero = format.zero == ZeroPoint::kFloat;
  if (Status s = check_size("weight", "zeros", zeros.size(), int_zero ? n * g : 0,
                            int_zero ? "N*groups" : "0 (not an integer zero point format)", nm);
      !s.ok())
    return s;
  if (Status s = check_size("weight", "zeros_f", zeros_f.size(), float_zero ? n * g : 0,
                            float_zero ? "N*groups" : "0 (not a float zero point format)", nm);
      !s.ok())
    return s;
  if (Status s = check_size("weight", "g_idx", g_idx.size(), format.act_order ? k : 0,
                            format.act_order ? "K" : "0 (not an act-order format)", nm);
      !s.ok())
    return s;

  const int max_code = format.max_code();
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      const int q = codes[static_cast<size_t>(r * k + c)];
      if (q > max_code)
        return fail("weight code at row %" PRId64 ", col %" PRId64 " is %d, expected < %d (%s)",
                    r, c, q, max_code + 1, fn);
    }
  const char* sdt = dtype_name(format.scale_dtype);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < g; ++j) {
      const size_t i = static_cast<size_t>(r * g + j);
      const float s = scales[i];
      if (!std::isfinite(s))
        return fail("weight scale at row %" PRId64 ", group %" PRId64 " is %s, expected finite (%s)",
                    r, j, float_text(s).c_str(), fn);
      if (round_to(format.scale_dtype, s) != s)
        return fail("weight scale at row %" PRId64 ", group %" PRId64
                    " is %s, not exactly representable in scale dtype %s (%s)",
                    r, j, float_text(s).c_str(), sdt, fn);
      if (int_zero && zeros[i] > max_code)
        return fail("weight zero point at row %" PRId64 ", group %" PRId64
                    " is %d, expected < %d (%s)", r, j, zeros[i], max_code + 1, fn);
      if (float_zero) {
        const float z = zeros_f[i];
        if (!std::isfinite(z))
          return fail("weight float zero point at row %" PRId64 ", group %" PRId64
                      " is %s, expected finite (%s)", r, j, float_text(z).c_str(), fn);
        if (round_to(format.scale_dtype, z) != z)
          return fail("weight float zero point at row %" PRId64 ", group %" PRId64
                      " is %s, not exactly representable in scale dtype %s (%s)",
                      r, j, float_text(z).c_str(), sdt, fn);
      }
    }
  for (int64_t c = 0; c < static_cast<int64_t>(g_idx.size()); ++c) {
    const int32_t v = g_idx[static_cast<size_t>(c)];
    if (v < 0 || v >= g)
      return fail("weight g_idx[%" PRId64 "] is %d, expected in [0, %" PRId64 ") (%s)", c, v, g, fn);
  }
  return Status::Ok();
}

// =======================================================================================
// fp8
// =======================================================================================
const char* fp8_scaling_name(Fp8Scaling s) {
  switch (s) {
    case Fp8Scaling::kPerTensor: return "tensor";
    case Fp8Scaling::kPerRow: return "row";
    case Fp8Scaling::kBlock1x128: return "1x128";
    case Fp8Scaling::kBlock128x128: return "128x128";
  }
  return "invalid";
}

std::optional<Fp8Scaling> parse_fp8_scaling(std::string_view text) {
  for (Fp8Scaling s : {Fp8Scaling::kPerTensor, Fp8Scaling::kPerRow, Fp8Scaling::kBlock1x128,
                       Fp8Scaling::kBlock128x128})
    if (text == fp8_scaling_name(s)) return s;
  return std::nullopt;
}

Status Fp8Format::validate() const {
  if (dtype != DType::kE4M3 && dtype != DType::kE5M2)
    return fail("fp8 format dtype=%s is not supported, expected e4m3 or e5m2", dtype_name(dtype));
  if (!parse_fp8_scaling(fp8_scaling_name(scaling)))
    return fail("fp8 format scaling %d is not valid, expected tensor, row, 1x128 or 128x128",
                static_cast<int>(scaling));
  return Status::Ok();
}

std::string Fp8Format::name() const {
  std::string s = std::string("fp8-") + fp8_scaling_name(scaling);
  if (dtype == DType::kE5M2) s += "-e5m2";
  return s;
}

std::optional<Fp8Format> Fp8Format::parse(std::string_view text) {
  Fp8Format f;
  if (!consume(text, "fp8-")) return std::nullopt;
  // "-e5m2" selects e5m2; an explicit "-e4m3" is accepted too (the default).
  constexpr std::string_view kE5M2Suffix = "-e5m2", kE4M3Suffix = "-e4m3";
  if (text.size() > kE5M2Suffix.size() &&
      text.substr(text.size() - kE5M2Suffix.size()) == kE5M2Suffix) {
    f.dtype = DType::kE5M2;
    text.remove_suffix(kE5M2Suffix.size());
  } else if (text.size() > kE4M3Suffix.size() &&
             text.substr(text.size() - kE4M3Suffix.size()) == kE4M3Suffix) {
    text.remove_suffix(kE4M3Suffix.size());
  }
  const auto scaling = parse_fp8_scaling(text);
  if (!scaling) return std::nullopt;
  f.scaling = *scaling;
  return f;
}

int64_t Fp8Tensor::scale_rows() const {
  switch (format.scaling) {
    case Fp8Scaling::kPerRow:
    case Fp8Scaling::kBlock1x128: return rows;
    case Fp8Scaling::kBlock128x128: return (rows + kFp8Block - 1) / kFp8Block;
    default: return 1;
  }
}

int64_t Fp8Tensor::scale_cols() const {
  switch (format.scaling) {
    case Fp8Scaling::kBlock1x128:
    case Fp8Scaling::kBlock128x128: return (cols + kFp8Block - 1) / kFp8Block;
    default: return 1;
  }
}

float Fp8Tensor::scale_of(int64_t row, int64_t col) const {
  int64_t sr = 0, sc = 0;
  switch (format.scaling) {
    case Fp8Scaling::kPerTensor: break;
    case Fp8Scaling::kPerRow: sr = row; break;
    case Fp8Scaling::kBlock1x128: sr = row, sc = col / kFp8Block; break;
    case Fp8Scaling::kBlock128x128: sr = row / kFp8Block, sc = col / kFp8Block; break;
  }
  return scales[static_cast<size_t>(sr * scale_cols() + sc)];
}

float Fp8Tensor::dequant(int64_t row, int64_t col) const {
  // Same expression as dequantize_fp8_rows() (src/cpu/reference.cpp).
  const uint8_t code = codes[static_cast<size_t>(row * cols + col)];
  const float v = format.dtype == DType::kE5M2 ? e5m2_to_f32(code) : e4m3_to_f32(code);
  return v * scale_of(row, col);
}

Status Fp8Tensor::validate() const {
  if (Status s = format.validate(); !s.ok()) return s;
  const std::string nm = format.name();
  const char* fn = nm.c_str();
  if (Status s = check_shape("fp8 tensor", "rows", rows, "cols", cols, nm); !s.ok()) return s;
  if (Status s = check_size("fp8 tensor", "codes", codes.size(), rows * cols, "rows*cols", nm);
      !s.ok())
    return s;
  const int64_t sr = scale_rows(), sc = scale_cols();
  if (Status s = check_size("fp8 tensor", "scales", scales.size(), sr * sc,
                            "scale_rows*scale_cols", nm);
      !s.ok())
    return s;
  const bool e5m2 = format.dtype == DType::kE5M2;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const uint8_t code = codes[static_cast<size_t>(r * cols + c)];
      // e4m3: S.1111.111 is NaN. e5m2: S.11111.00 is inf, S.11111.xx NaN; the quantizers
      // saturate, so an infinite code is as corrupt as a NaN one.
      const bool bad = e5m2 ? (code & 0x7F) >= 0x7C : (code & 0x7F) == 0x7F;
      if (bad)
        return fail("fp8 tensor code at row %" PRId64 ", col %" PRId64
                    " is 0x%02x (%s), expected a finite %s code (%s)",
                    r, c, code, (e5m2 && (code & 0x7F) == 0x7C) ? "inf" : "NaN",
                    dtype_name(format.dtype), fn);
    }
  for (int64_t i = 0; i < sr * sc; ++i) {
    const float s = scales[static_cast<size_t>(i)];
    if (!std::isfinite(s) || !(s > 0))
      return fail("fp8 tensor scale at (%" PRId64 ", %" PRId64 ") is %s, expected finite and > 0 (%s)",
                  i / sc, i % sc, float_text(s).c_str(), fn);
  }
  return Status::Ok();
}

// =======================================================================================
// int8
// =======================================================================================
float Int8Tensor::dequant(int64_t row, int64_t col) const {
  // Same expression as dequantize_int8_rows() (src/cpu/reference.cpp).
  const float q = static_cast<float>(codes[static_cast<size_t>(row * cols + col)]);
  const float z = zeros.empty() ? 0.0f : static_cast<float>(zeros[static_cast<size_t>(row)]);
  return (q - z) * scales[static_cast<size_t>(row)];
}

Status Int8Tensor::validate() const {
  const std::string nm = zeros.empty() ? "int8" : "int8 with zero points";
  if (Status s = check_shape("int8 tensor", "rows", rows, "cols", cols, nm); !s.ok()) return s;
  if (Status s = check_size("int8 tensor", "codes", codes.size(), rows * cols, "rows*cols", nm);
      !s.ok())
    return s;
  if (Status s = check_size("int8 tensor", "scales", scales.size(), rows, "rows", nm); !s.ok())
    return s;
  if (!zeros.empty() && zeros.size() != static_cast<uint64_t>(rows))
    return fail("int8 tensor zeros has %zu elements, expected rows = %" PRId64
                " or 0 for symmetric (%s)", zeros.size(), rows, nm.c_str());
  for (int64_t r = 0; r < rows; ++r) {
    const float s = scales[static_cast<size_t>(r)];
    if (!std::isfinite(s) || !(s > 0))
      return fail("int8 tensor scale at row %" PRId64 " is %s, expected finite and > 0 (%s)", r,
                  float_text(s).c_str(), nm.c_str());
    if (!zeros.empty()) {
      const int32_t z = zeros[static_cast<size_t>(r)];
      if (z < -128 || z > 127)
        return fail("int8 tensor zero point at row %" PRId64 " is %d, expected in [-128, 127] (%s)",
                    r, z, nm.c_str());
    }
  }
  return Status::Ok();
}

}  // namespace lowbit
