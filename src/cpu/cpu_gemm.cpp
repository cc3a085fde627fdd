// The CPU backend: lowbit::Gemm on Device::cpu() runs the reference (dequantize exactly to
// fp32, fp64-accumulated GEMM), so the CLI works without a GPU and tests have an oracle
// behind the same API.
//
// Its weight layout, "canonical", is the canonical unpacked form of formats.hpp as raw
// buffers (docs/formats.md, "Kernel layouts"):
//   int:   data = codes u8 (n, k); scales = f32 (n, groups); zeros = u8 (n, groups) for
//          integer zeros or f32 (n, groups) for float zeros; index = g_idx i32 (k)
//   fp8:   data = codes (n, k); scales = f32 grid as Fp8Tensor::scales
//   int8:  data = i8 (n, k); scales = f32 (n)
//   dense: data = (n, k) in the dense dtype
// Workspace: fp32 copies of A (m, k), W (n, k), the fp32 result (m, n), bias (n), and the
// activation scales in canonical order.
#include <cstring>

#include "api/gemm_impl.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/reference.hpp"

namespace lowbit::detail {
namespace {

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

class CpuReferenceGemm final : public GemmImpl {
 public:
  explicit CpuReferenceGemm(const GemmDesc& d) : d_(d) {}

  std::string name() const override { return "cpu_reference"; }
  std::string weight_layout() const override { return "canonical"; }
  std::size_t workspace_size() const override {
    return sizeof(float) * static_cast<std::size_t>(d_.m * d_.k + d_.n * d_.k + d_.m * d_.n +
                                                    d_.n + gemm_a_scales_count(d_));
  }

  PackedWeight pack(const IntWeight& w) const override {
    PackedWeight p = header();
    p.data = w.codes;
    p.scales = bytes_of(w.scales);
    if (w.format.zero == ZeroPoint::kInteger) p.zeros = w.zeros;
    if (w.format.zero == ZeroPoint::kFloat) p.zeros = bytes_of(w.zeros_f);
    if (w.format.act_order) p.index = bytes_of(w.g_idx);
    return p;
  }
  PackedWeight pack(const Fp8Tensor& w) const override {
    PackedWeight p = header();
    p.data = w.codes;
    p.scales = bytes_of(w.scales);
    return p;
  }
  PackedWeight pack(const Int8Tensor& w) const override {
    PackedWeight p = header();
    p.data = bytes_of(w.codes);
    p.scales = bytes_of(w.scales);
    return p;
  }
  PackedWeight pack_dense(const void* w) const override {
    PackedWeight p = header();
    const auto* b = static_cast<const uint8_t*>(w);
    p.data.assign(b, b + d_.n * d_.k * static_cast<int64_t>(dtype_size(d_.w.dense_dtype)));
    return p;
  }

  Status run(const GemmArgs& args, void* workspace, Stream) const override {
    if (d_.w.kind == WeightKind::kInt && d_.w.int_format.act_order && args.w.index == nullptr)
      return Status::Fail("lowbit: run: act-order weights need w.index (g_idx) (" +
                          d_.describe() + ")");
    float* a = static_cast<float*>(workspace);
    float* w = a + d_.m * d_.k;
    float* c = w + d_.n * d_.k;
    float* bias = c + d_.m * d_.n;
    float* a_scales = bias + d_.n;
    load_activations(args, a_scales, a);
    load_weights(args.w, w);
    if (d_.has_bias)
      for (int64_t j = 0; j < d_.n; ++j) bias[j] = load_as_f32(args.bias, d_.out_dtype, j);
    gemm_nt_reference(a, w, d_.has_bias ? bias : nullptr, d_.m, d_.n, d_.k, c);
    for (int64_t i = 0; i < d_.m * d_.n; ++i) store_from_f32(args.out, d_.out_dtype, i, c[i]);
    return Status::Ok();
  }

 private:
  PackedWeight header() const {
    PackedWeight p;
    p.layout = weight_layout();
    p.format = d_.w;
    p.n = d_.n;
    p.k = d_.k;
    return p;
  }

  // `scratch` holds gemm_a_scales_count(d_) floats.
  void load_activations(const GemmArgs& args, float* scratch, float* a) const {
    const int64_t m = d_.m, k = d_.k;
    const DType t = d_.a.dtype;
    if (t == DType::kE4M3 || t == DType::kE5M2) {
      Fp8Format f{t, d_.a.fp8_scaling};
      const float* scales = static_cast<const float*>(args.a_scales);
      if (f.scaling == Fp8Scaling::kBlock1x128) {
        // K-block-major (kb, round_up(m, 4)) -> the canonical (m, kb) row-major.
        const int64_t kb = (k + kFp8Block - 1) / kFp8Block, m4 = (m + 3) / 4 * 4;
        for (int64_t r = 0; r < m; ++r)
          for (int64_t b = 0; b < kb; ++b) scratch[r * kb + b] = scales[b * m4 + r];
        scales = scratch;
      }
      dequantize_fp8_rows(f, m, k, static_cast<const uint8_t*>(args.a), scales, 0, m, a);
    } else if (t == DType::kI8) {
      dequantize_int8_rows(m, k, static_cast<const int8_t*>(args.a),
                           static_cast<const float*>(args.a_scales),
                           d_.a.int8_zero_point ? static_cast<const int32_t*>(args.a_zeros)
                                                : nullptr,
                           0, m, a);
    } else {
      for (int64_t i = 0; i < m * k; ++i) a[i] = load_as_f32(args.a, t, i);
    }
  }

  void load_weights(const WeightView& v, float* w) const {
    const int64_t n = d_.n, k = d_.k;
    switch (d_.w.kind) {
      case WeightKind::kDense:
        for (int64_t i = 0; i < n * k; ++i) w[i] = load_as_f32(v.data, d_.w.dense_dtype, i);
        break;
      case WeightKind::kInt:
        dequantize_int_rows(d_.w.int_format, n, k, static_cast<const uint8_t*>(v.data),
                            static_cast<const float*>(v.scales), v.zeros,
                            static_cast<const int32_t*>(v.index), 0, n, w);
        break;
      case WeightKind::kFp8:
        dequantize_fp8_rows(d_.w.fp8, n, k, static_cast<const uint8_t*>(v.data),
                            static_cast<const float*>(v.scales), 0, n, w);
        break;
      case WeightKind::kInt8:
        dequantize_int8_rows(n, k, static_cast<const int8_t*>(v.data),
                             static_cast<const float*>(v.scales), nullptr, 0, n, w);
        break;
    }
  }

  GemmDesc d_;
};

}  // namespace

Selection select_cpu(const GemmDesc& desc) {
  // The reference computes every valid problem; validate_desc() already ran.
  Selection s;
  s.impl = std::make_unique<CpuReferenceGemm>(desc);
  return s;
}

}  // namespace lowbit::detail
