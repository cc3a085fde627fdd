// The cuBLAS baseline family: can_implement(), the plan made at construction, pack(), run().
// The operand mapping, layouts and rules are in cublas_gemm.hpp.
#include "cuda/baseline/cublas_gemm.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/common/check.hpp"
#include "cuda/common/device_guard.hpp"

namespace lowbit::cuda {
namespace {

constexpr std::size_t kMaxWorkspaceBytes = std::size_t{32} << 20;  // the heuristic's cap
constexpr uint32_t kOperandAlign = 16;      // A, W, out, bias, scale grids (header comment)
constexpr uintptr_t kWorkspaceAlign = 256;  // cublasLtMatmul(): "must be 256B aligned"
constexpr int kHeuristicResults = 8;        // candidates asked of the heuristic, best first

// The outer-vector and 128-block fp8 scaling modes arrived in cuBLAS 12.9 (header enum
// cublasLtMatmulMatrixScale_t; CUBLASLT_MATMUL_DESC_{A,B}_SCALE_MODE).
#if CUBLAS_VER_MAJOR > 12 || (CUBLAS_VER_MAJOR == 12 && CUBLAS_VER_MINOR >= 9)
constexpr bool kHeaderHasScaleModes = true;
constexpr int32_t kModeScalar = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
constexpr int32_t kModeOuterVec = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
constexpr int32_t kModeVec128 = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
constexpr int32_t kModeBlk128 = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
#else
constexpr bool kHeaderHasScaleModes = false;
constexpr int32_t kModeScalar = 0, kModeOuterVec = 3, kModeVec128 = 4, kModeBlk128 = 5;
#endif
constexpr std::size_t kMinLtVersionForScaleModes = 120900;  // cublasLtGetVersion() encoding

// The value given to pointer attributes while asking the heuristic, before real pointers
// exist: 16-byte aligned and never dereferenced. cublasLt.h (CUBLASLT_MATMUL_DESC_BIAS_POINTER):
// "Routines that don't dereference this pointer, like cublasLtMatmulAlgoGetHeuristic()
// depend on its value to determine expected pointer alignment", so the plan assumes exactly
// the 16-byte alignment run() requires of the caller.
const void* const kHeuristicPointer = reinterpret_cast<const void*>(uintptr_t{kOperandAlign});

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
std::size_t round_up(std::size_t a, std::size_t b) { return (a + b - 1) / b * b; }

Status fail(const std::string& what) { return Status::Fail("lowbit: " + what); }

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::kF32:
      return CUDA_R_32F;
    case DType::kF16:
      return CUDA_R_16F;
    case DType::kBF16:
      return CUDA_R_16BF;
    case DType::kE4M3:
      return CUDA_R_8F_E4M3;
    case DType::kE5M2:
      return CUDA_R_8F_E5M2;
    default:
      throw Error(std::string("lowbit: cublas_baseline: no cuBLAS type for ") + dtype_name(t));
  }
}

std::string lt_version_text(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

// ---------------------------------------------------------------------------------------
// The fp8 scaling plan: which cuBLASLt mode each operand uses and how pack() lays out the
// weight scales for it (cublas_gemm.hpp, "fp8 scaling modes" and "Weight layouts").
// ---------------------------------------------------------------------------------------
enum class WScaleLayout : uint8_t {
  kAsIs,    // Fp8Tensor::scales unchanged: (1) or (n)
  kRowVec,  // a tensor scale broadcast to (n)
  kVec128,  // (ceil(k/128), n) row-major
  kBlk128,  // (ceil(n/128), L4) row-major, zero padded
};

struct Fp8Plan {
  int32_t w_mode = kModeScalar;    // cuBLAS "A" = lowbit's W
  int32_t act_mode = kModeScalar;  // cuBLAS "B" = lowbit's activations
  WScaleLayout w_scales = WScaleLayout::kAsIs;
  const char* layout = "fp8_nk";
  bool block = false;  // a 128-element mode: cuBLAS M and N must be multiples of 4
};

Status plan_fp8(const GemmDesc& d, Fp8Plan* plan) {
  const Fp8Scaling act = d.a.fp8_scaling;
  const Fp8Scaling w = d.w.fp8.scaling;
  const std::string w_name = fp8_scaling_name(w);
  switch (act) {
    case Fp8Scaling::kPerTensor:
      if (w != Fp8Scaling::kPerTensor)
        return fail(
            "cuBLASLt pairs a per-tensor activation scale only with a per-tensor weight "
            "scale, not " +
            w_name + " (use row or 1x128 activation scaling)");
      *plan = Fp8Plan{kModeScalar, kModeScalar, WScaleLayout::kAsIs, "fp8_nk", false};
      return Status::Ok();
    case Fp8Scaling::kPerRow:
      if (w == Fp8Scaling::kPerRow)
        *plan = Fp8Plan{kModeOuterVec, kModeOuterVec, WScaleLayout::kAsIs, "fp8_nk", false};
      else if (w == Fp8Scaling::kPerTensor)
        *plan =
            Fp8Plan{kModeOuterVec, kModeOuterVec, WScaleLayout::kRowVec, "fp8_nk_rowvec", false};
      else
        return fail(
            "cuBLASLt pairs row activation scales (outer-vector mode) only with row or "
            "tensor weight scales, not " +
            w_name + " (use 1x128 activation scaling)");
      return Status::Ok();
    case Fp8Scaling::kBlock1x128:
      if (w == Fp8Scaling::kBlock128x128)
        *plan = Fp8Plan{kModeBlk128, kModeVec128, WScaleLayout::kBlk128, "fp8_nk_blk128", true};
      else  // 1x128, row or tensor weight scales, expanded to one scale per 128 along k
        *plan = Fp8Plan{kModeVec128, kModeVec128, WScaleLayout::kVec128, "fp8_nk_vec128", true};
      return Status::Ok();
    case Fp8Scaling::kBlock128x128:
      break;
  }
  return fail("activations take tensor, row or 1x128 fp8 scaling, not 128x128");
}

const char* mode_name(int32_t mode) {
  if (mode == kModeOuterVec) return "OUTER_VEC_32F";
  if (mode == kModeVec128) return "VEC128_32F";
  if (mode == kModeBlk128) return "BLK128x128_32F";
  return "SCALAR_32F";
}

Status check_dense(const GemmDesc& d, const GpuSpec& gpu) {
  const DType t = d.a.dtype;  // == d.w.dense_dtype (validate_desc)
  if (t == DType::kBF16 && gpu.cc < 80)
    return fail("cuBLASLt bf16 GEMM needs compute capability 8.0+; this GPU is sm_" +
                std::to_string(gpu.cc));
  // cublasLtMatmul() datatypes table, CUBLAS_COMPUTE_32F: A/B 16F -> C 16F or 32F,
  // 16BF -> 16BF or 32F, 32F -> 32F.
  const bool ok = d.out_dtype == t || d.out_dtype == DType::kF32;
  if (!ok)
    return fail(std::string("cuBLASLt computes ") + dtype_name(t) + " x " + dtype_name(t) +
                " into " + dtype_name(t) + " or f32, not " + dtype_name(d.out_dtype));
  return Status::Ok();
}

Status check_fp8(const GemmDesc& d, const GpuSpec& gpu) {
  const std::string cc_text = "sm_" + std::to_string(gpu.cc);
  if (gpu.cc < 89)
    return fail("cuBLASLt fp8 GEMM needs compute capability 8.9+ (Ada, Hopper); this GPU is " +
                cc_text);
  if (d.a.dtype == DType::kE5M2 && d.w.fp8.dtype == DType::kE5M2)
    return fail("cuBLASLt has no e5m2 x e5m2 GEMM (one operand must be e4m3)");
  // cuBLAS "Tensor Core Usage": fp8 needs the dimensions and leading dimensions of every
  // matrix 16-byte aligned. With the TN mapping: K (rows of W and A^T, their ld) and N (rows
  // of out^T, its ld) in bytes.
  if (d.k % 16 != 0)
    return fail("cuBLASLt fp8 needs K to be a multiple of 16 (K=" + std::to_string(d.k) + ")");
  const int64_t out_size = static_cast<int64_t>(dtype_size(d.out_dtype));
  if (d.n * out_size % 16 != 0)
    return fail("cuBLASLt fp8 needs N * sizeof(out) to be a multiple of 16 bytes (N=" +
                std::to_string(d.n) + ", out=" + dtype_name(d.out_dtype) + ": N a multiple of " +
                std::to_string(16 / out_size) + ")");
  if (d.has_bias && d.out_dtype == DType::kF32)
    return fail(
        "cuBLASLt takes a bf16 bias with fp8 inputs and f32 output, lowbit's bias is in "
        "the output dtype (use bf16 or f16 output, or no bias)");

  Fp8Plan plan;
  if (Status s = plan_fp8(d, &plan); !s.ok()) return s;
  if (plan.w_mode == kModeScalar) return Status::Ok();

  // Outer-vector and 128-block modes: cuBLAS docs, "Narrow Precision Data Types Usage",
  // scaling modes overview: compute capability 9.0 only, cuBLAS 12.9+.
  const std::string what = plan.block ? "1x128/128x128 block" : "row (outer-vector)";
  if (gpu.cc != 90)
    return fail("cuBLASLt " + what + " fp8 scaling runs on compute capability 9.0 only; " +
                "this GPU is " + cc_text);
  if (!kHeaderHasScaleModes)
    return fail("cuBLASLt " + what + " fp8 scaling needs cuBLAS 12.9+; this build's " +
                "headers are older");
  const std::size_t lt_version = cublasLtGetVersion();
  if (lt_version < kMinLtVersionForScaleModes)
    return fail("cuBLASLt " + what + " fp8 scaling needs cuBLASLt 12.9+; the library loaded is " +
                lt_version_text(lt_version));
  // Docs 3.1.4.5.1 (scaling factors layouts): "M and N must be multiples of 4".
  if (plan.block && (d.m % 4 != 0 || d.n % 4 != 0))
    return fail("cuBLASLt " + what + " fp8 scaling needs m and n to be multiples of 4 (m=" +
                std::to_string(d.m) + ", n=" + std::to_string(d.n) + ")");
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------
// Device and handle
// ---------------------------------------------------------------------------------------

// One cuBLASLt handle per device, created on first use with that device current. cuBLASLt
// handles are thread-safe and carry no per-call state, so every Gemm on the device shares
// one. They are never destroyed: a static destructor could run after the CUDA runtime has
// shut down, and a handle is small.
cublasLtHandle_t lt_handle(int device) {
  static std::mutex mu;
  static std::map<int, cublasLtHandle_t> handles;
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  cublasLtHandle_t h = nullptr;
  LOWBIT_CUBLAS_CHECK(cublasLtCreate(&h));
  handles.emplace(device, h);
  return h;
}

template <typename T>
Status set_attr(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value,
                const char* what) {
  const cublasStatus_t s = cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value));
  if (s != CUBLAS_STATUS_SUCCESS) return check_impl::cublas_status(s, __FILE__, __LINE__, what);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------
// The implementation
// ---------------------------------------------------------------------------------------
class CublasLtGemm final : public detail::GemmImpl {
 public:
  CublasLtGemm(const GemmDesc& d, const GpuSpec& gpu);

  std::string name() const override { return kCublasBaselineName; }
  std::string weight_layout() const override { return layout_; }
  std::size_t workspace_size() const override { return algo_workspace_; }
  PackedWeight pack(const Fp8Tensor& w) const override;
  PackedWeight pack_dense(const void* w) const override;
  Status run(const GemmArgs& args, void* workspace, Stream stream) const override;

 private:
  // Fills a matmul descriptor (caller's storage) with the plan and the given pointers.
  Status describe_matmul(cublasLtMatmulDesc_t desc, const void* w_scales, const void* act_scales,
                         const void* bias) const;
  Status check_pointers(const GemmArgs& args, const void* workspace) const;
  std::string problem_text() const;
  // cuBLASLt takes layouts as non-const handles but only reads them; the layouts are fixed
  // after construction, so concurrent run() calls share them safely.
  static cublasLtMatrixLayout_t layout(const cublasLtMatrixLayoutOpaque_t& l) {
    return const_cast<cublasLtMatrixLayout_t>(&l);
  }

  GemmDesc d_;
  int device_;
  std::string gpu_name_;
  cublasLtHandle_t lt_ = nullptr;
  bool fp8_ = false;
  Fp8Plan plan_;
  std::string layout_;
  // cuBLAS view (header comment): W as k x n (ld k, op T), A^T as k x m (ld k), out^T n x m.
  cublasLtMatrixLayoutOpaque_t w_layout_{};
  cublasLtMatrixLayoutOpaque_t act_layout_{};
  cublasLtMatrixLayoutOpaque_t out_layout_{};
  cublasLtMatmulAlgo_t algo_{};
  std::size_t algo_workspace_ = 0;
};

std::string CublasLtGemm::problem_text() const {
  // The selector's message already names the problem (GemmDesc::describe()).
  std::string s = "this problem on cuda:" + std::to_string(device_) + " (" + gpu_name_ + ")";
  if (fp8_)
    s += std::string(", scale modes W ") + mode_name(plan_.w_mode) + " x A " +
         mode_name(plan_.act_mode);
  return s;
}

CublasLtGemm::CublasLtGemm(const GemmDesc& d, const GpuSpec& gpu)
    : d_(d), device_(gpu.device), gpu_name_(gpu.name) {
  DeviceGuard guard(device_);
  throw_if_error(guard.status());
  lt_ = lt_handle(device_);

  fp8_ = d_.w.kind == WeightKind::kFp8;
  if (fp8_) {
    throw_if_error(plan_fp8(d_, &plan_));
    layout_ = plan_.layout;
  } else {
    layout_ = "dense_nk";
  }
  const auto m = static_cast<uint64_t>(d_.m);
  const auto n = static_cast<uint64_t>(d_.n);
  const auto k = static_cast<uint64_t>(d_.k);
  const cudaDataType_t w_type = cuda_type(fp8_ ? d_.w.fp8.dtype : d_.w.dense_dtype);
  LOWBIT_CUBLAS_CHECK(cublasLtMatrixLayoutInit(&w_layout_, w_type, k, n, d_.k));
  LOWBIT_CUBLAS_CHECK(cublasLtMatrixLayoutInit(&act_layout_, cuda_type(d_.a.dtype), k, m, d_.k));
  LOWBIT_CUBLAS_CHECK(cublasLtMatrixLayoutInit(&out_layout_, cuda_type(d_.out_dtype), n, m, d_.n));

  // 1x128 activation scales arrive K-block-major, (ceil(k/128), round_up(m, 4)) (gemm.hpp):
  // cuBLASLt's VEC128 layout for its B operand ("N-major", ld m) when m % 4 == 0, which its
  // block mode requires anyway, so they pass straight through.

  // Ask the heuristic with the descriptor run() will build (pointers stand in as 16-byte
  // aligned placeholders), for algorithms that need no more than 16-byte aligned matrices
  // and at most 32 MiB of workspace.
  cublasLtMatmulDescOpaque_t desc{};
  const void* p = kHeuristicPointer;
  throw_if_error(describe_matmul(&desc, p, p, d_.has_bias ? p : nullptr));

  cublasLtMatmulPreferenceOpaque_t pref{};
  LOWBIT_CUBLAS_CHECK(cublasLtMatmulPreferenceInit(&pref));
  const uint64_t max_ws = kMaxWorkspaceBytes;
  LOWBIT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      &pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)));
  for (const cublasLtMatmulPreferenceAttributes_t attr :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    const uint32_t align = kOperandAlign;
    LOWBIT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(&pref, attr, &align, sizeof(align)));
  }

  cublasLtMatmulHeuristicResult_t results[kHeuristicResults] = {};
  int returned = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(
      lt_, &desc, layout(w_layout_), layout(act_layout_), layout(out_layout_), layout(out_layout_),
      &pref, kHeuristicResults, results, &returned);
  if (hs != CUBLAS_STATUS_SUCCESS) {
    (void)cudaGetLastError();
    throw Error("lowbit: cuBLASLt has no algorithm for " + problem_text() +
                ": heuristic returned " + cublasLtGetStatusName(hs) + " (" +
                cublasLtGetStatusString(hs) + ")");
  }
  for (int i = 0; i < returned; ++i) {
    if (results[i].state == CUBLAS_STATUS_SUCCESS &&
        results[i].workspaceSize <= kMaxWorkspaceBytes) {
      algo_ = results[i].algo;
      algo_workspace_ = round_up(results[i].workspaceSize, kWorkspaceAlign);
      return;
    }
  }
  throw Error("lowbit: cuBLASLt has no algorithm for " + problem_text() +
              " (the heuristic returned " + std::to_string(returned) + " candidates, none usable)");
}

Status CublasLtGemm::describe_matmul(cublasLtMatmulDesc_t desc, const void* w_scales,
                                     const void* act_scales, const void* bias) const {
  LOWBIT_CUBLAS_TRY(cublasLtMatmulDescInit(desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t op_t = CUBLAS_OP_T;
  const int32_t op_n = CUBLAS_OP_N;
  if (Status s = set_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, op_t, "TRANSA = T"); !s.ok()) return s;
  if (Status s = set_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, op_n, "TRANSB = N"); !s.ok()) return s;
  if (fp8_) {
#if CUBLAS_VER_MAJOR > 12 || (CUBLAS_VER_MAJOR == 12 && CUBLAS_VER_MINOR >= 9)
    // Only non-default modes are set, so the tensorwide path also works with cuBLASLt
    // libraries that predate the attribute.
    if (plan_.w_mode != kModeScalar)
      if (Status s = set_attr(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, plan_.w_mode,
                              "A_SCALE_MODE (weights)");
          !s.ok())
        return s;
    if (plan_.act_mode != kModeScalar)
      if (Status s = set_attr(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, plan_.act_mode,
                              "B_SCALE_MODE (activations)");
          !s.ok())
        return s;
#endif
    // Operand swap: cuBLAS' A is lowbit's W, cuBLAS' B the activations.
    if (Status s = set_attr(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, w_scales,
                            "A_SCALE_POINTER (weight scales)");
        !s.ok())
      return s;
    if (Status s = set_attr(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, act_scales,
                            "B_SCALE_POINTER (activation scales)");
        !s.ok())
      return s;
  }
  if (d_.has_bias) {
    // Bias in the output dtype: the default bias type (cublasLtMatmulDescAttributes_t,
    // BIAS_DATA_TYPE) for every combination can_implement() lets through.
    const uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    if (Status s = set_attr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, "EPILOGUE = BIAS");
        !s.ok())
      return s;
    if (Status s = set_attr(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias, "BIAS_POINTER"); !s.ok())
      return s;
  }
  return Status::Ok();
}

Status CublasLtGemm::check_pointers(const GemmArgs& args, const void* workspace) const {
  auto check = [&](const void* p, uintptr_t align, const char* what) {
    if (p == nullptr || reinterpret_cast<uintptr_t>(p) % align == 0) return Status::Ok();
    return fail(std::string("run: ") + what + " is not " + std::to_string(align) +
                "-byte aligned (kernel " + kCublasBaselineName + ", " + d_.describe() + ")");
  };
  Status s = check(args.a, kOperandAlign, "A (activations)");
  if (s.ok()) s = check(args.w.data, kOperandAlign, "weight data");
  if (s.ok()) s = check(args.out, kOperandAlign, "out");
  if (s.ok() && d_.has_bias) s = check(args.bias, kOperandAlign, "bias");
  if (s.ok() && fp8_) {
    const uintptr_t w_align = plan_.w_mode == kModeScalar ? sizeof(float) : kOperandAlign;
    const uintptr_t a_align = plan_.act_mode == kModeScalar ? sizeof(float) : kOperandAlign;
    s = check(args.w.scales, w_align, "weight scales");
    if (s.ok()) s = check(args.a_scales, a_align, "A scales");
  }
  if (s.ok() && workspace_size() > 0) s = check(workspace, kWorkspaceAlign, "workspace");
  return s;
}

Status CublasLtGemm::run(const GemmArgs& args, void* workspace, Stream stream) const {
  if (Status s = check_pointers(args, workspace); !s.ok()) return s;
  DeviceGuard guard(device_);
  if (!guard.status().ok()) return guard.status();

  char* ws = static_cast<char*>(workspace);
  const void* act_scales = args.a_scales;

  cublasLtMatmulDescOpaque_t desc{};  // on this call's stack: concurrent runs share nothing
  if (Status s = describe_matmul(&desc, args.w.scales, act_scales, args.bias); !s.ok()) return s;
  const float alpha = 1.0f;  // host pointer mode: read now, captured by value in a graph
  const float beta = 0.0f;
  LOWBIT_CUBLAS_TRY(cublasLtMatmul(lt_, &desc, &alpha, args.w.data, layout(w_layout_), args.a,
                                   layout(act_layout_), &beta, args.out, layout(out_layout_),
                                   args.out, layout(out_layout_), &algo_,
                                   algo_workspace_ > 0 ? ws : nullptr, algo_workspace_, stream));
  return Status::Ok();
}

template <typename T>
std::vector<uint8_t> to_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

PackedWeight CublasLtGemm::pack_dense(const void* w) const {
  PackedWeight p;
  p.layout = layout_;
  p.format = d_.w;
  p.n = d_.n;
  p.k = d_.k;
  const std::size_t bytes = static_cast<std::size_t>(d_.n * d_.k) * dtype_size(d_.w.dense_dtype);
  p.data.resize(bytes);
  std::memcpy(p.data.data(), w, bytes);
  return p;
}

PackedWeight CublasLtGemm::pack(const Fp8Tensor& w) const {
  PackedWeight p;
  p.layout = layout_;
  p.format = d_.w;
  p.n = d_.n;
  p.k = d_.k;
  p.data = w.codes;
  const int64_t n = d_.n;
  const int64_t kb = ceil_div(d_.k, kFp8Block);
  std::vector<float> s;
  switch (plan_.w_scales) {
    case WScaleLayout::kAsIs:
      s = w.scales;
      break;
    case WScaleLayout::kRowVec:
      s.assign(static_cast<std::size_t>(n), w.scales.at(0));
      break;
    case WScaleLayout::kVec128:  // (kb, n) row-major: element (row i, block b) at b * n + i
      s.resize(static_cast<std::size_t>(kb * n));
      for (int64_t b = 0; b < kb; ++b)
        for (int64_t i = 0; i < n; ++i)
          s[static_cast<std::size_t>(b * n + i)] = w.scale_of(i, b * kFp8Block);
      break;
    case WScaleLayout::kBlk128: {  // (nb, L4) row-major, K-major with column stride L4
      const int64_t nb = ceil_div(n, kFp8Block);
      const int64_t l4 = ceil_div(kb, 4) * 4;
      s.assign(static_cast<std::size_t>(nb * l4), 0.0f);
      for (int64_t r = 0; r < nb; ++r)
        for (int64_t b = 0; b < kb; ++b)
          s[static_cast<std::size_t>(r * l4 + b)] = w.scale_of(r * kFp8Block, b * kFp8Block);
      break;
    }
  }
  p.scales = to_bytes(s);
  return p;
}

}  // namespace

Status cublas_baseline_runs_on(const GpuSpec& gpu) {
  (void)gpu;
  return Status::Ok();
}

Status cublas_baseline_can_implement(const GemmDesc& d, const GpuSpec& gpu) {
  switch (d.w.kind) {
    case WeightKind::kDense:
      return check_dense(d, gpu);
    case WeightKind::kFp8:
      return check_fp8(d, gpu);
    case WeightKind::kInt:
    case WeightKind::kInt8:
      break;
  }
  return fail("the cuBLASLt baseline takes dense and fp8 weights, not " + d.w.name());
}

std::unique_ptr<detail::GemmImpl> cublas_baseline_make(const GemmDesc& desc, const GpuSpec& gpu) {
  return std::make_unique<CublasLtGemm>(desc, gpu);
}

}  // namespace lowbit::cuda
