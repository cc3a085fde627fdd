// lowbit: element types known to the library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace lowbit {

enum class DType : uint8_t {
  kF32,   // IEEE binary32
  kF16,   // IEEE binary16
  kBF16,  // bfloat16 (upper half of binary32)
  kE4M3,  // OCP fp8 e4m3fn: no infinities, one NaN pattern per sign (S.1111.111), max 448
  kE5M2,  // OCP fp8 e5m2: IEEE-like, max finite 57344
  kI8,
  kU8,
  kI16,
  kU16,
  kI32,
  kU32,
  kI64,
  kU64,
  kF64,
  kBool,
};

// Size in bytes of one element.
std::size_t dtype_size(DType t);
// Lower-case name as used by the CLI and in error messages: "f16", "bf16", "e4m3", ...
const char* dtype_name(DType t);
// Inverse of dtype_name(); also accepts "fp16", "float16", "bfloat16", "fp8", "float8_e4m3fn".
std::optional<DType> parse_dtype(std::string_view name);

// The safetensors dtype string ("F16", "BF16", "F8_E4M3", ...) and its inverse.
const char* dtype_safetensors_name(DType t);
std::optional<DType> dtype_from_safetensors(std::string_view name);

// True for the floating-point types the library can convert to and from fp32 exactly
// (f32, f16, bf16, e4m3, e5m2, f64).
bool dtype_is_float(DType t);

}  // namespace lowbit
