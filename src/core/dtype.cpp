#include "lowbit/dtype.hpp"

#include <string>

namespace lowbit {
namespace {

struct DTypeRow {
  DType type;
  std::size_t size;
  const char* name;         // lowbit's own name
  const char* safetensors;  // the safetensors header string
  bool is_float;
};

// One row per DType, in enum order.
constexpr DTypeRow kDTypes[] = {
    {DType::kF32, 4, "f32", "F32", true},    {DType::kF16, 2, "f16", "F16", true},
    {DType::kBF16, 2, "bf16", "BF16", true}, {DType::kE4M3, 1, "e4m3", "F8_E4M3", true},
    {DType::kE5M2, 1, "e5m2", "F8_E5M2", true}, {DType::kI8, 1, "i8", "I8", false},
    {DType::kU8, 1, "u8", "U8", false},      {DType::kI16, 2, "i16", "I16", false},
    {DType::kU16, 2, "u16", "U16", false},   {DType::kI32, 4, "i32", "I32", false},
    {DType::kU32, 4, "u32", "U32", false},   {DType::kI64, 8, "i64", "I64", false},
    {DType::kU64, 8, "u64", "U64", false},   {DType::kF64, 8, "f64", "F64", true},
    {DType::kBool, 1, "bool", "BOOL", false},
};

const DTypeRow& row(DType t) { return kDTypes[static_cast<int>(t)]; }

}  // namespace

std::size_t dtype_size(DType t) { return row(t).size; }
const char* dtype_name(DType t) { return row(t).name; }
const char* dtype_safetensors_name(DType t) { return row(t).safetensors; }
bool dtype_is_float(DType t) { return row(t).is_float; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& r : kDTypes)
    if (name == r.name) return r.type;
  struct Alias { const char* text; DType type; };
  static constexpr Alias kAliases[] = {
      {"fp32", DType::kF32}, {"float32", DType::kF32}, {"float", DType::kF32},
      {"fp16", DType::kF16}, {"float16", DType::kF16}, {"half", DType::kF16},
      {"bfloat16", DType::kBF16}, {"fp8", DType::kE4M3}, {"float8_e4m3fn", DType::kE4M3},
      {"fp8_e4m3", DType::kE4M3}, {"float8_e5m2", DType::kE5M2}, {"fp8_e5m2", DType::kE5M2},
      {"int8", DType::kI8}, {"uint8", DType::kU8}, {"int32", DType::kI32}};
  for (const auto& a : kAliases)
    if (name == a.text) return a.type;
  return std::nullopt;
}

std::optional<DType> dtype_from_safetensors(std::string_view name) {
  for (const auto& r : kDTypes)
    if (name == r.safetensors) return r.type;
  return std::nullopt;
}

}  // namespace lowbit
