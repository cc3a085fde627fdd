// Internal: what the checkpoint importers (import_fp8.cpp, import_int8.cpp) share: one-line
// messages about names and values read from a file, and the refusal that names the file, the
// weight and the problem ("lowbit: FILE: fp8 weight 'NAME': problem").
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "lowbit/dtype.hpp"
#include "lowbit/safetensors.hpp"
#include "lowbit/status.hpp"

namespace lowbit::import_detail {

// Tensor names come from a file: control bytes are escaped (\xNN) and long names cut, so that
// an error stays on one line.
inline std::string printable(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (out.size() >= 160) return out + "...";
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

inline std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

inline std::string float_text(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The dtypes a checkpoint scale may have (each converts to fp32 exactly).
inline bool scale_dtype_ok(DType t) { return t == DType::kF32 || t == DType::kBF16 || t == DType::kF16; }

// A shape with one element and rank <= 1: [] or [1].
inline bool is_scalar_shape(const std::vector<int64_t>& s) { return s.empty() || (s.size() == 1 && s[0] == 1); }

// Every message: "lowbit: FILE: <kind> weight 'NAME': problem" (kind "fp8", "int8").
class Checker {
 public:
  Checker(const SafetensorsReader& file, const std::string& weight, const char* kind)
      : file_(file), weight_(weight), kind_(kind) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw Error("lowbit: " + printable(file_.path()) + ": " + kind_ + " weight '" + printable(weight_) +
                "': " + problem);
  }
  static std::string quoted(const std::string& name) { return "'" + printable(name) + "'"; }

  void expect_scale_dtype(const TensorInfo& t, const char* role) const {
    if (!scale_dtype_ok(t.dtype))
      fail(std::string(role) + " " + quoted(t.name) + " has the wrong dtype (expected F32, BF16 " +
           "or F16 vs actual " + dtype_safetensors_name(t.dtype) + ")");
  }

  // Reads a scale tensor (dtype checked before) and checks every value is finite and > 0.
  // `where(i)` names element i in the message.
  template <typename Where>
  std::vector<float> positive_scales(const TensorInfo& t, const char* role, Where where) const {
    std::vector<float> v = file_.read_f32(t);
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]) || !(v[i] > 0.0f))
        fail(std::string(role) + " " + quoted(t.name) + where(static_cast<int64_t>(i)) + " is " +
             float_text(v[i]) + " (expected finite and > 0)");
    return v;
  }

 protected:
  const SafetensorsReader& file_;
  const std::string& weight_;
  const char* kind_;
};

}  // namespace lowbit::import_detail
