// lowbit: the GEMM API.
//
//   out[m, n] = A[m, k] * W[n, k]^T (+ bias[n])
//
// In the CUTLASS shape: describe the problem (GemmDesc), make an operation for a device
// (Gemm), ask can_implement() (a reason a person can act on when it cannot), pack the
// weights once into the layout the chosen kernel reads (pack()), allocate
// workspace_size() bytes, then run(). run() never allocates, synchronizes the host or
// prints: on CUDA it only enqueues work on `stream`, so it can be captured in a CUDA graph.
// A Gemm is immutable after construction; concurrent run() calls on different streams are
// safe when each has its own workspace and output.
//
// The weight layout depends on the weight format, n, k and the device, never on m: weights
// packed once serve every batch size.
//
// Stream-ordering contract (Hopper): some kernels (smxx_gemv, sm89_fp8_gemm, sm90_fp8_gemm
// without stream-K, sm80_int8_gemm, sm90_int8_gemm, sm80_mixed_gemm on grids of more CTAs
// than SMs) launch with
// Programmatic Dependent Launch and start reading their WEIGHTS (data, scales, zeros) while
// the previous kernel on the stream is still finishing; activations, bias and outputs are
// only touched after it completes. So the kernel immediately before run() on the same stream must not
// write the packed weights (uploads by cudaMemcpy, and any kernel earlier than that one, are
// fine). LOWBIT_GEMV_PDL=0 / LOWBIT_FP8_GEMM_PDL=0 / LOWBIT_INT8_GEMM_PDL=0 /
// LOWBIT_MIXED_GEMM_PDL=0 in the environment turn this off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lowbit/dtype.hpp"
#include "lowbit/formats.hpp"
#include "lowbit/status.hpp"

struct CUstream_st;  // the CUDA runtime's stream type; cudaStream_t converts to lowbit::Stream

namespace lowbit {

using Stream = ::CUstream_st*;

struct Device {
  enum class Kind : uint8_t { kCpu, kCuda };
  Kind kind = Kind::kCuda;
  int index = 0;
  static Device cpu() { return {Kind::kCpu, 0}; }
  static Device cuda(int index = 0) { return {Kind::kCuda, index}; }
  bool is_cpu() const { return kind == Kind::kCpu; }
  std::string name() const;  // "cpu", "cuda:0"
};

// What the weight operand W (n, k) is.
enum class WeightKind : uint8_t {
  kDense,  // plain f16 / bf16 / f32 values (the cuBLAS baseline)
  kInt,    // integer weights, IntWeightFormat (mixed GEMM / GEMV)
  kFp8,    // fp8 with an Fp8Format scaling
  kInt8,   // int8 per-channel (W8A8)
};

struct WeightFormat {
  WeightKind kind = WeightKind::kDense;
  DType dense_dtype = DType::kF16;  // kDense only
  IntWeightFormat int_format;       // kInt only
  Fp8Format fp8;                    // kFp8 only

  static WeightFormat dense(DType t);
  static WeightFormat integer(const IntWeightFormat& f);
  static WeightFormat fp8_format(const Fp8Format& f);
  static WeightFormat int8();
  std::string name() const;  // "f16", "w4g128", "fp8-128x128", "int8"
};

// What the activation operand A (m, k) is.
struct ActFormat {
  DType dtype = DType::kF16;  // f16 / bf16 / f32 (dense), e4m3 / e5m2 (fp8), i8 (int8)
  Fp8Scaling fp8_scaling = Fp8Scaling::kPerTensor;  // fp8: kPerTensor, kPerRow, kBlock1x128
  bool int8_zero_point = false;                     // int8: per-token zero point present
};

struct GemmDesc {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  ActFormat a;
  WeightFormat w;
  DType out_dtype = DType::kF16;  // f16 / bf16 / f32
  bool has_bias = false;          // bias (n) in out_dtype
  std::string describe() const;   // "m=1 n=6144 k=4096 a=f16 w=w4g128 out=f16"
};

// Weight buffers in the layout Gemm::weight_layout() names. What each pointer holds is
// defined by the layout (docs/formats.md, "Kernel layouts"); unused ones stay null.
struct WeightView {
  const void* data = nullptr;
  const void* scales = nullptr;
  const void* zeros = nullptr;
  const void* index = nullptr;  // act-order g_idx or a layout's permutation
};

struct GemmArgs {
  const void* a = nullptr;         // (m, k) row-major, desc.a.dtype
  const void* a_scales = nullptr;  // fp8 / int8: fp32, layout of gemm_a_scales() below
  const void* a_zeros = nullptr;   // int8 with zero point: int32 (m)
  WeightView w;                    // packed weights (device memory for CUDA, host for CPU)
  const void* bias = nullptr;      // (n) in desc.out_dtype, when desc.has_bias
  void* out = nullptr;             // (m, n) row-major, desc.out_dtype
};

// Activation scales as run() reads them (GemmArgs::a_scales), fp32:
//   fp8 per-tensor (1); fp8 per-row (m); int8 (m);
//   fp8 1x128: (ceil(k/128), round_up(m, 4)), K-block-major: for each 128-wide K block the m
//   scales of that block are contiguous, and each block's row is padded to a multiple of 4
//   elements (16 bytes), the layout a TMA load needs (DeepGEMM and cuBLASLt read it so).
// The count of fp32 values run() reads (padding included); 0 for f16/bf16/f32 activations.
int64_t gemm_a_scales_count(const GemmDesc& desc);
// The canonical scales of quantized activations rearranged into that layout (padding 0).
std::vector<float> gemm_a_scales(const Fp8Tensor& a);

// Weights packed on the host for one layout; upload each buffer as is.
struct PackedWeight {
  std::string layout;
  WeightFormat format;
  int64_t n = 0;
  int64_t k = 0;
  std::vector<uint8_t> data, scales, zeros, index;
  WeightView host_view() const;  // pointers into the vectors above (null when empty)
};

// How a Gemm chooses its kernel.
struct GemmOptions {
  // Empty: the heuristics choose among every family of the build. A family name
  // ("cublas_baseline", "sm80_mixed_gemm", "smxx_gemv", "sm90_fp8_gemm", "sm89_fp8_gemm",
  // "sm90_int8_gemm", "sm80_int8_gemm";
  // `lowbit info` lists them) restricts the choice to that family, for baselines and for
  // testing one family; can_implement() then says why that family cannot run the problem.
  // Ignored on the CPU device.
  std::string family;
};

namespace detail {
class GemmImpl;
}

class Gemm {
 public:
  explicit Gemm(const GemmDesc& desc, Device device = Device::cuda(),
                const GemmOptions& options = {});
  ~Gemm();
  Gemm(Gemm&&) noexcept;
  Gemm& operator=(Gemm&&) noexcept;

  const GemmDesc& desc() const { return desc_; }
  Device device() const { return device_; }

  // Ok, or why this problem cannot run on this device in this build.
  Status can_implement() const;
  std::size_t workspace_size() const;  // bytes; 0 when can_implement() fails
  std::string kernel_name() const;     // the kernel chosen, "" when none
  std::string weight_layout() const;   // the layout pack() produces, "" when none

  // Pack canonical weights into weight_layout(). Throws lowbit::Error when the weights do
  // not match desc (format, n, k) or can_implement() fails.
  PackedWeight pack(const IntWeight& w) const;
  PackedWeight pack(const Fp8Tensor& w) const;
  PackedWeight pack(const Int8Tensor& w) const;
  // Dense weights: (n, k) row-major of desc.w.dense_dtype.
  PackedWeight pack_dense(const void* w) const;

  // CUDA: enqueue on `stream` (a stream of the Gemm's device), with the Gemm's device made
  // current for the launches and the caller's current device given back, whatever thread and
  // device the call comes from; CPU: computes synchronously (stream ignored). Checks
  // arguments (null pointers, can_implement) and returns a failed Status without running.
  Status run(const GemmArgs& args, void* workspace, Stream stream = nullptr) const;

 private:
  GemmDesc desc_;
  Device device_;
  Status status_;
  std::unique_ptr<detail::GemmImpl> impl_;
};

}  // namespace lowbit
