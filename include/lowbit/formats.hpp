// lowbit: quantized formats, as types with validation, and their canonical unpacked forms.
//
// The written spec is docs/formats.md; this header is its C++ face. Every format has a
// canonical UNPACKED form (one integer code per byte, scales and zeros as plain fp32
// arrays) that is the input to every packer and to the CPU reference. Kernel layouts are
// produced from it by packers and never leak into these types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lowbit/dtype.hpp"
#include "lowbit/status.hpp"

namespace lowbit {

// ---------------------------------------------------------------------------------------
// Integer weights, 1..8 bits: W[n][k] = (q[n][k] - z[n][g(k)]) * s[n][g(k)]
// ---------------------------------------------------------------------------------------
enum class ZeroPoint : uint8_t {
  kSymmetric,  // no stored zero: z = 2^(bits-1) (codes are unsigned, "uint4b8"/"uint8b128")
  kInteger,    // per-group integer zero point z in [0, 2^bits) (GPTQ / AWQ asymmetric)
  kFloat,      // per-group float zero point, stored in the scale dtype (HQQ / GemLite)
};

struct IntWeightFormat {
  int bits = 4;                       // 1..8
  ZeroPoint zero = ZeroPoint::kSymmetric;
  int group_size = 128;               // 32, 64, 128, or 0 = per-channel (one group spans K)
  DType scale_dtype = DType::kF16;    // f16, bf16 or f32
  bool act_order = false;             // GPTQ act-order: the group of column k is g_idx[k]

  Status validate() const;
  // Short name used by the CLI and by files: "w4g128", "w4g128-asym", "w3g64-fzp",
  // "w8" (per-channel), "w4g128-act" (act-order). The scale dtype is not part of the name.
  std::string name() const;
  // Inverse of name(): w<bits>[g<group>][-asym|-fzp][-act]. Returns nullopt on bad text.
  static std::optional<IntWeightFormat> parse(std::string_view text);

  int max_code() const { return (1 << bits) - 1; }
  int symmetric_zero() const { return 1 << (bits - 1); }
  friend bool operator==(const IntWeightFormat& a, const IntWeightFormat& b) {
    return a.bits == b.bits && a.zero == b.zero && a.group_size == b.group_size &&
           a.scale_dtype == b.scale_dtype && a.act_order == b.act_order;
  }
};

// Canonical unpacked integer weight of shape (n, k): n output channels, k input features.
struct IntWeight {
  IntWeightFormat format;
  int64_t n = 0;
  int64_t k = 0;
  std::vector<uint8_t> codes;   // (n, k) row-major, each in [0, 2^bits)
  std::vector<float> scales;    // (n, groups()) row-major; finite, exactly representable in
                                // format.scale_dtype
  std::vector<uint8_t> zeros;   // (n, groups()) integer zero points (ZeroPoint::kInteger only)
  std::vector<float> zeros_f;   // (n, groups()) float zero points, representable in
                                // format.scale_dtype (ZeroPoint::kFloat only)
  std::vector<int32_t> g_idx;   // (k) group of column k, in [0, groups()) (act_order only)

  // Number of groups along K: k / group_size, or 1 for per-channel.
  int64_t groups() const;
  int64_t group_of(int64_t col) const {
    if (format.act_order) return g_idx[static_cast<size_t>(col)];
    return format.group_size == 0 ? 0 : col / format.group_size;
  }
  float zero_of(int64_t row, int64_t group) const;
  float dequant(int64_t row, int64_t col) const;  // exact in fp32 ((q - z) and one product)
  // Checks every size, code range, zero range, scale (finite, representable) and g_idx.
  Status validate() const;
};

// ---------------------------------------------------------------------------------------
// fp8 tensors: X[r][c] = decode(code[r][c]) * scale[r / block_rows][c / block_cols]
// ---------------------------------------------------------------------------------------
enum class Fp8Scaling : uint8_t {
  kPerTensor,     // one scale
  kPerRow,        // one scale per row (per token for A, per channel for B)
  kBlock1x128,    // one scale per row per 128 columns (A in DeepSeek-V3 scaling)
  kBlock128x128,  // one scale per 128x128 block (B in DeepSeek-V3 scaling)
};
const char* fp8_scaling_name(Fp8Scaling s);  // "tensor", "row", "1x128", "128x128"
std::optional<Fp8Scaling> parse_fp8_scaling(std::string_view text);

struct Fp8Format {
  DType dtype = DType::kE4M3;  // kE4M3 or kE5M2
  Fp8Scaling scaling = Fp8Scaling::kPerTensor;
  Status validate() const;
  std::string name() const;  // "fp8-tensor", "fp8-row", "fp8-1x128", "fp8-128x128" (+"-e5m2")
  static std::optional<Fp8Format> parse(std::string_view text);
  friend bool operator==(const Fp8Format& a, const Fp8Format& b) {
    return a.dtype == b.dtype && a.scaling == b.scaling;
  }
};

inline constexpr int64_t kFp8Block = 128;

struct Fp8Tensor {
  Fp8Format format;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> codes;  // (rows, cols) row-major fp8 codes (no NaN codes allowed)
  std::vector<float> scales;   // (scale_rows(), scale_cols()) row-major; finite and > 0

  int64_t scale_rows() const;
  int64_t scale_cols() const;
  float scale_of(int64_t row, int64_t col) const;
  float dequant(int64_t row, int64_t col) const;
  Status validate() const;
};

// ---------------------------------------------------------------------------------------
// int8 (W8A8 / SmoothQuant): X[r][c] = (q[r][c] - z[r]) * s[r]
// Activations: per-token scale, symmetric (z = 0) or with an int32 zero point in [-128, 127].
// Weights: per-channel scale, symmetric only.
// ---------------------------------------------------------------------------------------
struct Int8Tensor {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int8_t> codes;    // (rows, cols) row-major
  std::vector<float> scales;    // (rows); finite and > 0
  std::vector<int32_t> zeros;   // (rows) in [-128, 127], or empty for symmetric

  bool has_zero_point() const { return !zeros.empty(); }
  float dequant(int64_t row, int64_t col) const;
  Status validate() const;
};

}  // namespace lowbit
