// lowbit::Gemm: argument checking and dispatch to the implementation a selector chose.
#include "lowbit/gemm.hpp"

#include <sstream>

#include "api/gemm_impl.hpp"

namespace lowbit {

std::string Device::name() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index);
}

WeightFormat WeightFormat::dense(DType t) {
  WeightFormat f;
  f.kind = WeightKind::kDense;
  f.dense_dtype = t;
  return f;
}
WeightFormat WeightFormat::integer(const IntWeightFormat& i) {
  WeightFormat f;
  f.kind = WeightKind::kInt;
  f.int_format = i;
  return f;
}
WeightFormat WeightFormat::fp8_format(const Fp8Format& p) {
  WeightFormat f;
  f.kind = WeightKind::kFp8;
  f.fp8 = p;
  return f;
}
WeightFormat WeightFormat::int8() {
  WeightFormat f;
  f.kind = WeightKind::kInt8;
  return f;
}

std::string WeightFormat::name() const {
  switch (kind) {
    case WeightKind::kDense: return dtype_name(dense_dtype);
    case WeightKind::kInt: return int_format.name();
    case WeightKind::kFp8: return fp8.name();
    case WeightKind::kInt8: return "int8";
  }
  return "?";
}

std::string GemmDesc::describe() const {
  std::ostringstream s;
  s << "m=" << m << " n=" << n << " k=" << k << " a=" << dtype_name(a.dtype);
  if (a.dtype == DType::kE4M3 || a.dtype == DType::kE5M2)
    s << "(" << fp8_scaling_name(a.fp8_scaling) << ")";
  if (a.dtype == DType::kI8 && a.int8_zero_point) s << "(zp)";
  s << " w=" << w.name() << " out=" << dtype_name(out_dtype);
  if (has_bias) s << " +bias";
  return s.str();
}

int64_t gemm_a_scales_count(const GemmDesc& d) {
  if (d.a.dtype == DType::kI8) return d.m;
  if (d.a.dtype != DType::kE4M3 && d.a.dtype != DType::kE5M2) return 0;
  switch (d.a.fp8_scaling) {
    case Fp8Scaling::kPerTensor: return 1;
    case Fp8Scaling::kPerRow: return d.m;
    case Fp8Scaling::kBlock1x128:
      return (d.k + kFp8Block - 1) / kFp8Block * ((d.m + 3) / 4 * 4);
    case Fp8Scaling::kBlock128x128: break;
  }
  throw Error("lowbit: activations take tensor, row or 1x128 fp8 scaling, not 128x128");
}

std::vector<float> gemm_a_scales(const Fp8Tensor& a) {
  throw_if_error(a.validate());
  if (a.format.scaling != Fp8Scaling::kBlock1x128) {
    if (a.format.scaling == Fp8Scaling::kBlock128x128)
      throw Error("lowbit: gemm_a_scales: activations take tensor, row or 1x128 scaling");
    return a.scales;
  }
  const int64_t kb = a.scale_cols(), m4 = (a.rows + 3) / 4 * 4;
  std::vector<float> out(static_cast<size_t>(kb * m4), 0.0f);
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t b = 0; b < kb; ++b) out[b * m4 + r] = a.scales[r * kb + b];
  return out;
}

WeightView PackedWeight::host_view() const {
  auto ptr = [](const std::vector<uint8_t>& v) -> const void* {
    return v.empty() ? nullptr : v.data();
  };
  return WeightView{ptr(data), ptr(scales), ptr(zeros), ptr(index)};
}

namespace detail {

namespace {
std::string not_taken(const GemmImpl& impl, const char* what) {
  return "lowbit: kernel " + impl.name() + " does not take " + what + " weights";
}
bool is_fp8(DType t) { return t == DType::kE4M3 || t == DType::kE5M2; }
bool is_act_float(DType t) { return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32; }
}  // namespace

PackedWeight GemmImpl::pack(const IntWeight&) const { throw Error(not_taken(*this, "integer")); }
PackedWeight GemmImpl::pack(const Fp8Tensor&) const { throw Error(not_taken(*this, "fp8")); }
PackedWeight GemmImpl::pack(const Int8Tensor&) const { throw Error(not_taken(*this, "int8")); }
PackedWeight GemmImpl::pack_dense(const void*) const { throw Error(not_taken(*this, "dense")); }

Status validate_desc(const GemmDesc& d) {
  auto fail = [&](const std::string& what) {
    return Status::Fail("lowbit: " + what + " (" + d.describe() + ")");
  };
  if (d.m <= 0 || d.n <= 0 || d.k <= 0) return fail("m, n and k must be positive");
  if (!is_act_float(d.out_dtype)) return fail("output dtype must be f16, bf16 or f32");
  switch (d.w.kind) {
    case WeightKind::kDense:
      if (!is_act_float(d.w.dense_dtype))
        return fail("dense weights must be f16, bf16 or f32");
      if (d.a.dtype != d.w.dense_dtype)
        return fail("dense GEMM needs activations and weights of one dtype");
      break;
    case WeightKind::kInt: {
      if (Status s = d.w.int_format.validate(); !s.ok()) return s;
      const int gs = d.w.int_format.group_size;
      if (gs > 0 && d.k % gs != 0)
        return fail("weight K=" + std::to_string(d.k) + " is not a multiple of group_size=" +
                    std::to_string(gs) + " (" + d.w.int_format.name() + ")");
      if (!is_act_float(d.a.dtype) && d.a.dtype != DType::kI8)
        return fail("integer weights take f16/bf16/f32 or int8 activations");
      if (d.a.dtype == DType::kI8 && d.w.int_format.zero == ZeroPoint::kFloat)
        return fail("int8 activations do not combine with float zero points");
      break;
    }
    case WeightKind::kFp8:
      if (Status s = d.w.fp8.validate(); !s.ok()) return s;
      if (!is_fp8(d.a.dtype)) return fail("fp8 weights need fp8 activations");
      if (d.a.fp8_scaling == Fp8Scaling::kBlock128x128)
        return fail("activations take tensor, row or 1x128 scaling, not 128x128");
      break;
    case WeightKind::kInt8:
      if (d.a.dtype != DType::kI8) return fail("int8 weights need int8 activations");
      break;
  }
  return Status::Ok();
}

}  // namespace detail

Gemm::Gemm(const GemmDesc& desc, Device device, const GemmOptions& options)
    : desc_(desc), device_(device) {
  status_ = detail::validate_desc(desc_);
  if (!status_.ok()) return;
  detail::Selection sel = device_.is_cpu() ? detail::select_cpu(desc_)
                                           : detail::select_cuda(desc_, device_.index,
                                                                 options.family);
  impl_ = std::move(sel.impl);
  if (!impl_) status_ = sel.why_not.ok() ? Status::Fail("lowbit: no kernel for " +
                                                        desc_.describe())
                                         : sel.why_not;
}

Gemm::~Gemm() = default;
Gemm::Gemm(Gemm&&) noexcept = default;
Gemm& Gemm::operator=(Gemm&&) noexcept = default;

Status Gemm::can_implement() const { return status_; }
std::size_t Gemm::workspace_size() const { return impl_ ? impl_->workspace_size() : 0; }
std::string Gemm::kernel_name() const { return impl_ ? impl_->name() : std::string(); }
std::string Gemm::weight_layout() const { return impl_ ? impl_->weight_layout() : std::string(); }

namespace {
void require(const Status& s) { throw_if_error(s); }
std::string shape_text(int64_t n, int64_t k) {
  return "(" + std::to_string(n) + ", " + std::to_string(k) + ")";
}
}  // namespace

PackedWeight Gemm::pack(const IntWeight& w) const {
  require(status_);
  if (desc_.w.kind != WeightKind::kInt || !(w.format == desc_.w.int_format))
    throw Error("lowbit: pack: weight format " + w.format.name() + " does not match the GEMM's " +
                desc_.w.name());
  if (w.n != desc_.n || w.k != desc_.k)
    throw Error("lowbit: pack: weight shape " + shape_text(w.n, w.k) + " does not match (n, k) = " +
                shape_text(desc_.n, desc_.k));
  require(w.validate());
  return impl_->pack(w);
}

PackedWeight Gemm::pack(const Fp8Tensor& w) const {
  require(status_);
  if (desc_.w.kind != WeightKind::kFp8 || !(w.format == desc_.w.fp8))
    throw Error("lowbit: pack: weight format " + w.format.name() + " does not match the GEMM's " +
                desc_.w.name());
  if (w.rows != desc_.n || w.cols != desc_.k)
    throw Error("lowbit: pack: weight shape " + shape_text(w.rows, w.cols) +
                " does not match (n, k) = " + shape_text(desc_.n, desc_.k));
  require(w.validate());
  return impl_->pack(w);
}

PackedWeight Gemm::pack(const Int8Tensor& w) const {
  require(status_);
  if (desc_.w.kind != WeightKind::kInt8)
    throw Error("lowbit: pack: int8 weights given to a GEMM of " + desc_.w.name() + " weights");
  if (w.rows != desc_.n || w.cols != desc_.k)
    throw Error("lowbit: pack: weight shape " + shape_text(w.rows, w.cols) +
                " does not match (n, k) = " + shape_text(desc_.n, desc_.k));
  if (w.has_zero_point()) throw Error("lowbit: pack: int8 weights must be symmetric (no zeros)");
  require(w.validate());
  return impl_->pack(w);
}

PackedWeight Gemm::pack_dense(const void* w) const {
  require(status_);
  if (desc_.w.kind != WeightKind::kDense)
    throw Error("lowbit: pack_dense: the GEMM takes " + desc_.w.name() + " weights");
  if (w == nullptr) throw Error("lowbit: pack_dense: weight pointer is null");
  return impl_->pack_dense(w);
}

Status Gemm::run(const GemmArgs& args, void* workspace, Stream stream) const {
  if (!status_.ok()) return status_;
  auto missing = [&](const char* what) {
    return Status::Fail(std::string("lowbit: run: ") + what + " is null (" + desc_.describe() +
                        ", kernel " + impl_->name() + ")");
  };
  if (args.a == nullptr) return missing("A (activations)");
  if (args.out == nullptr) return missing("out");
  if (args.w.data == nullptr) return missing("weight data");
  if (desc_.has_bias && args.bias == nullptr) return missing("bias");
  const DType at = desc_.a.dtype;
  if ((at == DType::kE4M3 || at == DType::kE5M2 || at == DType::kI8) && args.a_scales == nullptr)
    return missing("A scales");
  if (at == DType::kI8 && desc_.a.int8_zero_point && args.a_zeros == nullptr)
    return missing("A zero points");
  if (desc_.w.kind != WeightKind::kDense && args.w.scales == nullptr)
    return missing("weight scales");
  if (desc_.w.kind == WeightKind::kInt && desc_.w.int_format.zero != ZeroPoint::kSymmetric &&
      args.w.zeros == nullptr)
    return missing("weight zero points");
  if (impl_->workspace_size() > 0 && workspace == nullptr) return missing("workspace");
  return impl_->run(args, workspace, stream);
}

}  // namespace lowbit
