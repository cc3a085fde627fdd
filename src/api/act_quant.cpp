// lowbit::ActQuant: argument checking, the CPU implementation (the reference of the GPU
// kernels), and dispatch to the CUDA kernels (src/cuda/quant/smxx_fp8_act_quant.*: the fp8
// kernels and the int8 kernel: per token, and static per tensor).
//
// The CPU path is written out here rather than calling quantize_fp8() / quantize_fp8_static()
// / quantize_int8() because those take fp32, allocate their result and reject non-finite
// input, while this one reads f16/bf16 in place (any row stride), writes the GEMM's scale
// layout, and defines the non-finite cases (act_quant.hpp). On finite input it computes
// exactly their rule, in the same fp32 operations and order (tests/cpu/test_act_quant.cpp
// checks it bit for bit against them and, for fp8 and int8-static (which no host quantizer
// has), against an independent recomputation).
#include "lowbit/act_quant.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "lowbit/numeric.hpp"
#include "lowbit/quantize.hpp"

#if defined(LOWBIT_WITH_CUDA)
#include "cuda/quant/smxx_fp8_act_quant.hpp"
#endif

namespace lowbit {

const char* act_quant_mode_name(ActQuantMode mode) {
  switch (mode) {
    case ActQuantMode::kDynamicPerToken: return "per-token";
    case ActQuantMode::kDynamicPerTensor: return "per-tensor";
    case ActQuantMode::kStaticPerTensor: return "static";
    case ActQuantMode::kDynamicBlock1x128: return "1x128";
    case ActQuantMode::kInt8PerToken: return "int8-per-token";
    case ActQuantMode::kInt8PerTokenZeroPoint: return "int8-per-token-zp";
    case ActQuantMode::kInt8StaticPerTensor: return "int8-static";
  }
  return "?";
}

bool act_quant_is_int8(ActQuantMode mode) {
  return mode == ActQuantMode::kInt8PerToken || mode == ActQuantMode::kInt8PerTokenZeroPoint ||
         mode == ActQuantMode::kInt8StaticPerTensor;
}

Fp8Scaling act_quant_scaling(ActQuantMode mode) {
  switch (mode) {
    case ActQuantMode::kDynamicPerToken: return Fp8Scaling::kPerRow;
    case ActQuantMode::kDynamicBlock1x128: return Fp8Scaling::kBlock1x128;
    // int8: one scale per token (int8-static writes its scale in every row); the field is not
    // part of their ActFormat (act_quant.hpp).
    case ActQuantMode::kInt8PerToken:
    case ActQuantMode::kInt8PerTokenZeroPoint:
    case ActQuantMode::kInt8StaticPerTensor: return Fp8Scaling::kPerRow;
    case ActQuantMode::kDynamicPerTensor:
    case ActQuantMode::kStaticPerTensor: break;
  }
  return Fp8Scaling::kPerTensor;
}

ActFormat ActQuantDesc::act_format() const {
  ActFormat f;
  if (act_quant_is_int8(mode)) {
    f.dtype = DType::kI8;
    f.int8_zero_point = mode == ActQuantMode::kInt8PerTokenZeroPoint ||
                        (mode == ActQuantMode::kInt8StaticPerTensor && int8_zero_point);
    return f;
  }
  f.dtype = DType::kE4M3;
  f.fp8_scaling = act_quant_scaling(mode);
  return f;
}

std::string ActQuantDesc::describe() const {
  std::string s = "m=" + std::to_string(m) + " k=" + std::to_string(k) + " x=" + dtype_name(dtype) +
                  " mode=" + act_quant_mode_name(mode);
  if (x_row_stride != 0) s += " x_row_stride=" + std::to_string(x_row_stride);
  if (int8_zero_point) s += " int8_zero_point";
  return s;
}

namespace {

constexpr int64_t kMaxCudaRows = std::numeric_limits<int32_t>::max() - 3;  // round_up(m, 4) < 2^31

bool mode_known(ActQuantMode mode) {
  switch (mode) {
    case ActQuantMode::kDynamicPerToken:
    case ActQuantMode::kDynamicPerTensor:
    case ActQuantMode::kStaticPerTensor:
    case ActQuantMode::kDynamicBlock1x128:
    case ActQuantMode::kInt8PerToken:
    case ActQuantMode::kInt8PerTokenZeroPoint:
    case ActQuantMode::kInt8StaticPerTensor: return true;
  }
  return false;
}

// Whether run() writes zero points (ActQuantArgs::zeros).
bool writes_zeros(const ActQuantDesc& d) {
  return d.mode == ActQuantMode::kInt8PerTokenZeroPoint ||
         (d.mode == ActQuantMode::kInt8StaticPerTensor && d.int8_zero_point);
}

// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte (compared as
// integers: the pointers may belong to unrelated allocations).
bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

Status validate_desc(const ActQuantDesc& d, Device device) {
  auto fail = [&](const std::string& what) {
    return Status::Fail("lowbit: act_quant: " + what + " (" + d.describe() + ", " + device.name() +
                        ")");
  };
  if (!mode_known(d.mode))
    return fail("mode " + std::to_string(static_cast<int>(d.mode)) +
                " is not an ActQuantMode (per-token, per-tensor, static, 1x128, int8-per-token, "
                "int8-per-token-zp, int8-static)");
  if (d.int8_zero_point && d.mode != ActQuantMode::kInt8StaticPerTensor)
    return fail("int8_zero_point is on, but only mode int8-static reads it (int8-per-token-zp "
                "always writes zero points, the other modes none)");
  if (d.m < 1) return fail("m=" + std::to_string(d.m) + " must be >= 1");
  if (d.k < 1 || d.k % 16 != 0)
    return fail("k=" + std::to_string(d.k) +
                (act_quant_is_int8(d.mode)
                     ? " must be a positive multiple of 16 (the int8 GEMM's requirement: rows of "
                       "int8 codes are whole 16-byte units for TMA; the kernel writes 16 codes "
                       "per 16-byte store)"
                     : " must be a positive multiple of 16 (the fp8 GEMM's requirement: rows of "
                       "e4m3 codes are whole 16-byte units for TMA and cuBLASLt; the kernel "
                       "writes 16 codes per 16-byte store)"));
  if (d.dtype != DType::kF16 && d.dtype != DType::kBF16)
    return fail(std::string("X dtype=") + dtype_name(d.dtype) + " must be f16 or bf16");
  if (d.x_row_stride < 0 || (d.x_row_stride != 0 && d.x_row_stride < d.k))
    return fail("x_row_stride=" + std::to_string(d.x_row_stride) + " must be 0 (dense) or >= k=" +
                std::to_string(d.k));
  const int64_t ld = d.row_stride();
  if (d.m > std::numeric_limits<int64_t>::max() / ld)
    return fail("m * x_row_stride overflows the element count");
  if (!device.is_cpu()) {
    if (ld % 8 != 0)
      return fail("x_row_stride=" + std::to_string(ld) +
                  " must be a multiple of 8 on CUDA (each row of X starts 16-byte aligned)");
    if (d.m > kMaxCudaRows)
      return fail("m=" + std::to_string(d.m) + " exceeds " + std::to_string(kMaxCudaRows) +
                  " (rows map to one grid dimension)");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------
// The CPU implementation
// ---------------------------------------------------------------------------------------
class CpuActQuant {
 public:
  CpuActQuant(const ActQuantDesc& d, const ActQuantArgs& a)
      : d_(d), x_(static_cast<const unsigned char*>(a.x)), q_(static_cast<uint8_t*>(a.q)),
        ld_(d.row_stride()), bf16_(d.dtype == DType::kBF16) {}

  // X[r][c] as fp32 (exact).
  float x(int64_t r, int64_t c) const {
    uint16_t h;
    std::memcpy(&h, x_ + 2 * (r * ld_ + c), sizeof h);
    return bf16_ ? bf16_to_f32(h) : f16_to_f32(h);
  }
  // max |X| over rows [r0, r1) x columns [c0, c1); NaN never enters (std::max(a, NaN) == a,
  // as fmaxf on the GPU).
  float amax(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const {
    float a = 0.0f;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c) a = std::max(a, std::fabs(x(r, c)));
    return a;
  }
  // code = NaN ? 0x7F : sat_rne(x * inv) for the same block.
  void codes(int64_t r0, int64_t r1, int64_t c0, int64_t c1, float inv) const {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c) {
        const float v = x(r, c) * inv;
        q_[r * d_.k + c] = std::isnan(v) ? uint8_t{0x7F} : f32_to_e4m3(v);
      }
  }
  // The dynamic rule of quantize_fp8(): amax' = max(amax, 1e-4), s = amax' / 448,
  // inv = 448 / amax'.
  static void scale_of_amax(float amax, float* s, float* inv) {
    const float a = std::max(amax, kFp8AmaxFloor);
    *s = a / kE4M3Max;
    *inv = kE4M3Max / a;
  }

 private:
  const ActQuantDesc& d_;
  const unsigned char* x_;
  uint8_t* q_;
  int64_t ld_;
  bool bf16_;
};

// rne() of quantize_int8() (std::nearbyint, default rounding mode: half to even) applied to a
// quotient x / s or lo / s; a NaN quotient counts as 0 (act_quant.hpp, non-finite input).
float rne_quotient(float q) { return std::isnan(q) ? 0.0f : std::nearbyint(q); }

// int8-static: the caller's s (and z) for every row, no range; the codes as the dynamic modes
// write them for that s and z (act_quant.hpp). s and z are not checked (the GPU cannot check
// them without synchronizing, and both devices must give the same result for any value).
void run_cpu_int8_static(const ActQuantDesc& d, const ActQuantArgs& a, const CpuActQuant& cpu) {
  const bool zero_point = d.int8_zero_point;
  const float s = *a.static_scale;
  const int32_t zi = zero_point ? *a.static_zero_point : 0;
  const float z = static_cast<float>(zi);  // round to nearest: exact for |z| <= 2^24
  int8_t* q = static_cast<int8_t*>(a.q);
  for (int64_t r = 0; r < d.m; ++r) {
    a.scales[r] = s;
    if (zero_point) a.zeros[r] = zi;
    int8_t* codes = q + r * d.k;
    if (!zero_point) {
      // q = clamp(rne(x / s), -127, 127)
      for (int64_t c = 0; c < d.k; ++c)
        codes[c] = static_cast<int8_t>(std::clamp(rne_quotient(cpu.x(r, c) / s), -127.0f, 127.0f));
    } else {
      // q = clamp(rne(x / s) + z, -128, 127)
      for (int64_t c = 0; c < d.k; ++c)
        codes[c] =
            static_cast<int8_t>(std::clamp(rne_quotient(cpu.x(r, c) / s) + z, -128.0f, 127.0f));
    }
  }
}

// The int8 modes (int8-static: run_cpu_int8_static above): quantize_int8()'s rule per row
// (quantize.cpp), the same fp32 operations in the same order, NaN skipped by the range and
// counting as 0 in the quotients. The range starts at 0 instead of row[0]: min(min x, 0) and
// max(max x, 0) are the same values (up to the sign of a zero, which neither s, nor z, nor a
// code can show).
void run_cpu_int8(const ActQuantDesc& d, const ActQuantArgs& a, const CpuActQuant& cpu) {
  if (d.mode == ActQuantMode::kInt8StaticPerTensor) return run_cpu_int8_static(d, a, cpu);
  const bool zero_point = d.mode == ActQuantMode::kInt8PerTokenZeroPoint;
  int8_t* q = static_cast<int8_t*>(a.q);
  for (int64_t r = 0; r < d.m; ++r) {
    float amax = 0.0f, lo = 0.0f, hi = 0.0f;
    for (int64_t c = 0; c < d.k; ++c) {
      const float v = cpu.x(r, c);
      if (std::isnan(v)) continue;
      amax = std::max(amax, std::fabs(v));
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    int8_t* codes = q + r * d.k;
    if (!zero_point) {
      // s = max(amax, 1e-8) / 127, q = clamp(rne(x / s), -127, 127)
      const float s = std::max(amax, 1e-8f) / 127.0f;
      a.scales[r] = s;
      for (int64_t c = 0; c < d.k; ++c)
        codes[c] = static_cast<int8_t>(std::clamp(rne_quotient(cpu.x(r, c) / s), -127.0f, 127.0f));
    } else {
      // s = max(hi - lo, 1e-8) / 255, z = clamp(rne(-128 - lo / s), -128, 127),
      // q = clamp(rne(x / s) + z, -128, 127)
      const float s = std::max(hi - lo, 1e-8f) / 255.0f;
      float lo_s = lo / s;
      if (std::isnan(lo_s)) lo_s = 0.0f;  // lo = -inf, s = +inf
      const float z = std::clamp(std::nearbyint(-128.0f - lo_s), -128.0f, 127.0f);
      a.scales[r] = s;
      a.zeros[r] = static_cast<int32_t>(z);
      for (int64_t c = 0; c < d.k; ++c)
        codes[c] =
            static_cast<int8_t>(std::clamp(rne_quotient(cpu.x(r, c) / s) + z, -128.0f, 127.0f));
    }
  }
}

void run_cpu(const ActQuantDesc& d, const ActQuantArgs& a) {
  const CpuActQuant cpu(d, a);
  const int64_t m = d.m, k = d.k;
  float s = 0.0f, inv = 0.0f;
  switch (d.mode) {
    case ActQuantMode::kInt8PerToken:
    case ActQuantMode::kInt8PerTokenZeroPoint:
    case ActQuantMode::kInt8StaticPerTensor:
      run_cpu_int8(d, a, cpu);
      break;
    case ActQuantMode::kDynamicPerToken:
      for (int64_t r = 0; r < m; ++r) {
        CpuActQuant::scale_of_amax(cpu.amax(r, r + 1, 0, k), &s, &inv);
        a.scales[r] = s;
        cpu.codes(r, r + 1, 0, k, inv);
      }
      break;
    case ActQuantMode::kDynamicBlock1x128: {
      // Scales K-block-major: (kb, round_up(m, 4)), padding rows 0 (gemm_a_scales()).
      const int64_t kb = (k + kFp8Block - 1) / kFp8Block, m4 = (m + 3) / 4 * 4;
      for (int64_t b = 0; b < kb; ++b) {
        const int64_t c0 = b * kFp8Block, c1 = std::min(k, c0 + kFp8Block);
        for (int64_t r = 0; r < m; ++r) {
          CpuActQuant::scale_of_amax(cpu.amax(r, r + 1, c0, c1), &s, &inv);
          a.scales[b * m4 + r] = s;
          cpu.codes(r, r + 1, c0, c1, inv);
        }
        for (int64_t r = m; r < m4; ++r) a.scales[b * m4 + r] = 0.0f;
      }
      break;
    }
    case ActQuantMode::kDynamicPerTensor:
      CpuActQuant::scale_of_amax(cpu.amax(0, m, 0, k), &s, &inv);
      a.scales[0] = s;
      cpu.codes(0, m, 0, k, inv);
      break;
    case ActQuantMode::kStaticPerTensor:
      // quantize_fp8_static(): the multiplier 1 / s rounded to fp32 first.
      s = *a.static_scale;
      inv = 1.0f / s;
      if (a.scales != a.static_scale) a.scales[0] = s;
      cpu.codes(0, m, 0, k, inv);
      break;
  }
}

bool aligned(const void* p, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

}  // namespace

ActQuant::ActQuant(const ActQuantDesc& desc, Device device) : desc_(desc), device_(device) {
  status_ = validate_desc(desc_, device_);
  if (!status_.ok() || device_.is_cpu()) return;
#if defined(LOWBIT_WITH_CUDA)
  status_ = cuda::act_quant_runs_on(device_.index);
#else
  status_ = Status::Fail("lowbit: act_quant on " + device_.name() +
                         ": built without CUDA (configured without nvcc or with LOWBIT_CUDA=OFF); "
                         "use Device::cpu()");
#endif
}

Status ActQuant::can_implement() const { return status_; }

std::size_t ActQuant::workspace_size() const {
  if (!status_.ok() || device_.is_cpu()) return 0;
  return desc_.mode == ActQuantMode::kDynamicPerTensor ? sizeof(uint32_t) : 0;
}

int64_t ActQuant::scales_count() const {
  if (!status_.ok()) return 0;
  GemmDesc g;
  g.m = desc_.m;
  g.k = desc_.k;
  g.a = desc_.act_format();
  return gemm_a_scales_count(g);
}

std::string ActQuant::kernel_name() const {
  if (!status_.ok()) return "";
  if (device_.is_cpu()) return "cpu_reference";
  return act_quant_is_int8(desc_.mode) ? "smxx_int8_act_quant" : "smxx_fp8_act_quant";
}

Status ActQuant::run(const ActQuantArgs& args, void* workspace, Stream stream) const {
  if (!status_.ok()) return status_;
  const std::string what = " (" + desc_.describe() + ", " + device_.name() + ")";
  auto fail = [&](const std::string& msg) { return Status::Fail("lowbit: act_quant: run: " + msg + what); };
  if (args.x == nullptr) return fail("x is null");
  const bool int8 = act_quant_is_int8(desc_.mode);
  const bool zero_point = writes_zeros(desc_);
  const bool int8_static = desc_.mode == ActQuantMode::kInt8StaticPerTensor;
  if (args.q == nullptr) return fail(int8 ? "q (the int8 codes) is null" : "q (the e4m3 codes) is null");
  if (args.scales == nullptr) return fail("scales is null");
  if (zero_point && args.zeros == nullptr)
    return fail(std::string("zeros is null (mode ") + act_quant_mode_name(desc_.mode) +
                (int8_static ? " with int8_zero_point" : "") + " writes m int32 zero points)");
  if ((desc_.mode == ActQuantMode::kStaticPerTensor || int8_static) && args.static_scale == nullptr)
    return fail(std::string("static_scale is null (mode ") + act_quant_mode_name(desc_.mode) +
                " needs the caller's scale)");
  if (int8_static) {
    if (desc_.int8_zero_point && args.static_zero_point == nullptr)
      return fail("static_zero_point is null, but ActQuantDesc::int8_zero_point is on (the GEMM "
                  "reads zero points: give the caller's (1) int32 zero point)");
    if (!desc_.int8_zero_point && args.static_zero_point != nullptr)
      return fail("static_zero_point is given, but ActQuantDesc::int8_zero_point is off (the "
                  "codes would ignore it and the GEMM read no zero points: turn the flag on, "
                  "and build GemmDesc::a from act_format())");
    // Every row's scale (zero point) is written while the kernel's threads read s (z).
    const std::size_t rows = static_cast<std::size_t>(desc_.m);
    if (overlap(args.scales, rows * sizeof(float), args.static_scale, sizeof(float)))
      return fail("scales (m floats) overlaps static_scale (mode int8-static writes s to every "
                  "row while it reads s: give separate buffers)");
    if (zero_point && overlap(args.zeros, rows * sizeof(int32_t), args.static_zero_point, sizeof(int32_t)))
      return fail("zeros (m int32) overlaps static_zero_point (mode int8-static writes z to every "
                  "row while it reads z: give separate buffers)");
  }
  if (workspace_size() > 0 && workspace == nullptr)
    return fail("workspace is null, expected " + std::to_string(workspace_size()) + " bytes");
  if (device_.is_cpu()) {
    run_cpu(desc_, args);
    return Status::Ok();
  }
  // What the kernel's vector accesses need (16-byte loads of X, 16-byte stores of codes,
  // 4-byte scalars).
  if (!aligned(args.x, 16)) return fail("x is not 16-byte aligned");
  if (!aligned(args.q, 16)) return fail("q is not 16-byte aligned");
  if (!aligned(args.scales, 4)) return fail("scales is not 4-byte aligned");
  if (zero_point && !aligned(args.zeros, 4)) return fail("zeros is not 4-byte aligned");
  if (args.static_scale != nullptr && !aligned(args.static_scale, 4))
    return fail("static_scale is not 4-byte aligned");
  if (int8_static && zero_point && !aligned(args.static_zero_point, 4))
    return fail("static_zero_point is not 4-byte aligned");
  if (workspace_size() > 0 && !aligned(workspace, 4)) return fail("workspace is not 4-byte aligned");
#if defined(LOWBIT_WITH_CUDA)
  return int8 ? cuda::int8_act_quant_launch(desc_, args, stream, device_.index)
              : cuda::fp8_act_quant_launch(desc_, args, workspace, stream, device_.index);
#else
  (void)stream;
  return status_;  // not reached: a CUDA ActQuant of this build never has an ok status
#endif
}

}  // namespace lowbit
