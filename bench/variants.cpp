#include "bench/variants.hpp"

#include <algorithm>
#include <cctype>

namespace lowbit::bench {

namespace {

ActFormat act(DType t, Fp8Scaling s = Fp8Scaling::kPerTensor) {
  ActFormat a;
  a.dtype = t;
  a.fp8_scaling = s;
  return a;
}

WeightFormat w_int(int bits, ZeroPoint zero, int group_size, DType scale_dtype, bool act_order = false) {
  IntWeightFormat f;
  f.bits = bits;
  f.zero = zero;
  f.group_size = group_size;
  f.scale_dtype = scale_dtype;
  f.act_order = act_order;
  return WeightFormat::integer(f);
}

WeightFormat w_fp8(Fp8Scaling s) {
  Fp8Format f;
  f.dtype = DType::kE4M3;
  f.scaling = s;
  return WeightFormat::fp8_format(f);
}

constexpr DType kF16 = DType::kF16;
constexpr DType kBF16 = DType::kBF16;
constexpr DType kE4M3 = DType::kE4M3;
constexpr DType kI8 = DType::kI8;
constexpr Suite kS1 = Suite::kSuite1;
constexpr Suite kS2 = Suite::kSuite2;
constexpr Suite kCpu = Suite::kCpuSmall;
constexpr ZeroPoint kSym = ZeroPoint::kSymmetric;
constexpr ZeroPoint kAsym = ZeroPoint::kInteger;
constexpr Fp8Scaling kTensor = Fp8Scaling::kPerTensor;
constexpr Fp8Scaling kRow = Fp8Scaling::kPerRow;
constexpr Fp8Scaling k1x128 = Fp8Scaling::kBlock1x128;
constexpr Fp8Scaling k128x128 = Fp8Scaling::kBlock128x128;

// fp8 outputs are bf16, as torch._scaled_mm and ANCHORS.md Suite 2 use them; the fp8 activations
// are given already quantized (their quantization is not timed).
std::vector<Variant> make_table() {
  using R = Runner;
  return {
      // --- baselines: the peers of ANCHORS.md, re-measured on every run -----------------------
      {"cublas_f16", {kS1}, R::kCublasGemmEx, act(kF16), WeightFormat::dense(kF16), kF16,
       "ANCHORS.md 'cuBLAS fp16': cublasGemmEx TN, fp32 compute; the f16 speedup reference"},
      {"cublas_bf16", {kS1}, R::kCublasGemmEx, act(kBF16), WeightFormat::dense(kBF16), kBF16,
       "the same call in bf16; the speedup reference of bf16 variants"},
      {"cublaslt_fp8_tensor", {kS1}, R::kGemmBaseline, act(kE4M3, kTensor), w_fp8(kTensor), kBF16,
       "ANCHORS.md 'cuBLASLt fp8 tensor': lowbit's cuBLASLt baseline, per-tensor scales"},
      {"cublaslt_fp8_row", {kS1}, R::kGemmBaseline, act(kE4M3, kRow), w_fp8(kRow), kBF16,
       "ANCHORS.md 'fp8 row': per-token x per-channel scales"},
      {"cublaslt_fp8_block", {kS1, kS2}, R::kGemmBaseline, act(kE4M3, k1x128), w_fp8(k128x128),
       kBF16, "ANCHORS.md 'fp8 block' / Suite 2 cuBLASLt blockwise; the Suite 2 speedup reference"},
      // --- lowbit's own kernels, by weight format ------------------------------------------------
      {"w4g128_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(4, kSym, 128, kF16), kF16,
       "GPTQ-style W4 g128 symmetric: Marlin's and GemLite's format in ANCHORS.md"},
      {"w4g128_bf16", {kS1}, R::kGemmLibrary, act(kBF16), w_int(4, kSym, 128, kBF16), kBF16,
       "the same for bf16 models"},
      {"w4g128asym_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(4, kAsym, 128, kF16), kF16,
       "AWQ-style W4 g128 with integer zero points: one more stream of zeros"},
      {"w4g128asym_bf16", {kS1}, R::kGemmLibrary, act(kBF16), w_int(4, kAsym, 128, kBF16), kBF16,
       "the same for bf16 models"},
      {"w4g128act_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(4, kSym, 128, kF16, true), kF16,
       "GPTQ act-order (desc_act) W4 g128: a shuffled uniform g_idx, the activations gathered per call"},
      {"w8g128act_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(8, kSym, 128, kF16, true), kF16,
       "GPTQ act-order W8 g128: the 8-bit form of the same"},
      // --- decode GEMV widths (smxx_gemv, m <= 8; run Suite 1 with --m 1,2,4,8) -------------
      {"w1g128_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(1, kSym, 128, kF16), kF16,
       "1-bit g128 symmetric: the GEMV's narrowest width (floor 7.2 us at M=1)"},
      {"w2g128_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(2, kSym, 128, kF16), kF16,
       "2-bit g128 symmetric: GemLite W2 in ANCHORS.md"},
      {"w3g128_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(3, kSym, 128, kF16), kF16,
       "3-bit g128 symmetric: the odd width GemLite cannot pack"},
      {"w5g128_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(5, kSym, 128, kF16), kF16,
       "5-bit g128 symmetric: odd width"},
      {"w6g128_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(6, kSym, 128, kF16), kF16,
       "6-bit g128 symmetric: odd width"},
      {"w8g128_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(8, kSym, 128, kF16), kF16,
       "8-bit g128 symmetric: GemLite W8 (ANCHORS.md), the issue's 8-bit line"},
      {"w4g128fzp_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(4, ZeroPoint::kFloat, 128, kF16), kF16,
       "HQQ / GemLite float zero points (W = (q - z) * s, z f16)"},
      {"w4g128_a8", {kS1}, R::kGemmLibrary, act(kI8), w_int(4, kSym, 128, kF16), kF16,
       "int8 per-token activations x W4 g128 (the GEMV's int8 path)"},
      {"w8_f16", {kS1}, R::kGemmLibrary, act(kF16), w_int(8, kSym, 0, kF16), kF16,
       "W8 per-channel weight-only: GemLite W8 in ANCHORS.md"},
      {"w8_bf16", {kS1}, R::kGemmLibrary, act(kBF16), w_int(8, kSym, 0, kBF16), kBF16,
       "the same for bf16 models"},
      {"w8a8_int8", {kS1}, R::kGemmLibrary, act(kI8), WeightFormat::int8(), kF16,
       "SmoothQuant W8A8: int8 per-token x int8 per-channel, int32 accumulation"},
      {"fp8_tensor", {kS1}, R::kGemmLibrary, act(kE4M3, kTensor), w_fp8(kTensor), kBF16,
       "lowbit's fp8 kernel against cublaslt_fp8_tensor"},
      {"fp8_row", {kS1}, R::kGemmLibrary, act(kE4M3, kRow), w_fp8(kRow), kBF16,
       "lowbit's fp8 kernel against cublaslt_fp8_row"},
      {"fp8_block", {kS1, kS2}, R::kGemmLibrary, act(kE4M3, k1x128), w_fp8(k128x128), kBF16,
       "DeepSeek-V3 scaling: lowbit's fp8 block kernel against cuBLASLt and DeepGEMM"},
      // --- the CPU small suite (no GPU): the CPU reference backend -------------------------------
      {"cpu_f16", {kCpu}, R::kGemmCpu, act(kF16), WeightFormat::dense(kF16), kF16,
       "dense f16 on the CPU backend; the small suite's speedup reference"},
      {"cpu_w4g128_f16", {kCpu}, R::kGemmCpu, act(kF16), w_int(4, kSym, 128, kF16), kF16,
       "W4 g128 symmetric on the CPU backend"},
      {"cpu_w8_f16", {kCpu}, R::kGemmCpu, act(kF16), w_int(8, kSym, 0, kF16), kF16,
       "W8 per-channel on the CPU backend"},
      {"cpu_fp8_tensor", {kCpu}, R::kGemmCpu, act(kE4M3, kTensor), w_fp8(kTensor), kBF16,
       "fp8 per-tensor on the CPU backend"},
  };
}

bool mentions_cublas(const std::string& kernel) {
  std::string lower(kernel);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("cublas") != std::string::npos;
}

}  // namespace

const std::vector<Variant>& variant_table() {
  static const std::vector<Variant> table = make_table();
  return table;
}

bool in_suite(const Variant& v, Suite s) {
  return std::find(v.suites.begin(), v.suites.end(), s) != v.suites.end();
}

GemmDesc make_desc(const Variant& v, int64_t m, int64_t n, int64_t k) {
  GemmDesc d;
  d.m = m;
  d.n = n;
  d.k = k;
  d.a = v.a;
  d.w = v.w;
  d.out_dtype = v.out;
  return d;
}

std::string speedup_reference(const Variant& v, Suite s) {
  switch (s) {
    case Suite::kSuite1: return v.a.dtype == DType::kBF16 ? "cublas_bf16" : "cublas_f16";
    case Suite::kSuite2: return "cublaslt_fp8_block";
    case Suite::kCpuSmall: return "cpu_f16";
  }
  return v.name;
}

std::string kernel_rule_violation(const Variant& v, const std::string& kernel) {
  switch (v.runner) {
    case Runner::kGemmBaseline:
      if (!mentions_cublas(kernel))
        return "lowbit: the selector picked " + kernel +
               ", not the cuBLASLt baseline, although GemmOptions::family asked for it";
      return "";
    case Runner::kGemmLibrary:
      if (mentions_cublas(kernel))
        return "lowbit: no lowbit kernel for this format yet (the selector falls back to " +
               kernel + ")";
      return "";
    case Runner::kCublasGemmEx:
    case Runner::kGemmCpu: return "";
  }
  return "";
}

// One place for the tolerances (CONVENTIONS.md). The output rounding dominates: f16 out
// ~3e-4, bf16 out ~1.6e-3 (ANCHORS.md saw 1.66e-3 for fp8 block GEMMs with bf16 out).
Tolerance tolerance_for(const GemmDesc& d) {
  static constexpr Tolerance kTable[] = {
      {"f16", 1e-3}, {"bf16", 8e-3}, {"fp8", 2e-3}, {"int8", 1e-3}};
  if (d.a.dtype == DType::kE4M3 || d.a.dtype == DType::kE5M2) return kTable[2];
  if (d.a.dtype == DType::kI8) return kTable[3];
  if (d.a.dtype == DType::kBF16 || d.out_dtype == DType::kBF16) return kTable[1];
  return kTable[0];
}

}  // namespace lowbit::bench
