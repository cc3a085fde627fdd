// The activation quantizer: instantiations and launches (smxx_fp8_act_quant.hpp).
//
// Instantiated kernels: {f16, bf16} x the five fp8 ops, one per (input dtype, mode step),
// the fused per-tensor kernel for {f16, bf16}, and the int8 kernel for {f16, bf16} x
// {symmetric, zero point} x {dynamic per token, static}; each row below is what a mode
// launches:
//   kDynamicPerToken   kPerRow                                   one launch, one read of X
//   kDynamicBlock1x128 kGroup128                                 one launch, one read of X
//   kStaticPerTensor   kTensorStatic                             one launch, one read of X
//   kDynamicPerTensor  memset(amax) + kTensorAmax + kTensorDynamic  two reads of X (the amax
//                      of all of X must be known before the first code; a fused grid-wide
//                      barrier would need a cooperative launch); or, when X fits the
//                      registers of one cluster of up to 8 CTAs, the fused kernel: one
//                      launch, one read (fp8_act_quant_fused_ctas)
//   kInt8PerToken            smxx_int8_act_quant_kernel<., false, false>  one launch, one read
//   kInt8PerTokenZeroPoint   smxx_int8_act_quant_kernel<., true, false>   of X (kPerRow's
//                      geometry; rows over 32768 elements read later chunks twice)
//   kInt8StaticPerTensor     smxx_int8_act_quant_kernel<., int8_zero_point, true>  one launch,
//                      one read of X (the vLLM static W8A8 path: checkpoints with input_scale
//                      and optional input_zero_point, both flavours instantiated)
// On sm_90 small grids are programmatic dependent launches (fp8_act_quant_uses_pdl).
#include "cuda/quant/smxx_fp8_act_quant.cuh"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>
#include <type_traits>

#include "cuda/common/check.hpp"
#include "cuda/common/device_guard.hpp"
#include "cuda/common/launch_attrs.hpp"
#include "cuda/heuristics/gpu_spec.hpp"

namespace lowbit::cuda {

namespace {

// As a programmatic dependent launch where fp8_act_quant_uses_pdl() says so; the kernel
// orders itself with griddepcontrol either way (smxx_fp8_act_quant.cuh).
template <bool kBf16, Fp8ActQuantOp kOp>
Status launch(const Fp8ActQuantParams& p, int64_t k, int64_t rows, const GpuSpec& gpu, Stream stream) {
  const Fp8ActQuantShape s = fp8_act_quant_shape(k, rows, kOp);
  const bool pdl = fp8_act_quant_uses_pdl(gpu, s.blocks);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(s.blocks));
  cfg.blockDim = dim3(static_cast<unsigned>(s.threads_per_row), static_cast<unsigned>(s.rows_per_block));
  cfg.stream = stream;
  cudaLaunchAttribute attr[1] = {pdl_launch_attr()};
  cfg.attrs = pdl ? attr : nullptr;
  cfg.numAttrs = pdl ? 1 : 0;
  LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, &smxx_fp8_act_quant_kernel<kBf16, kOp>, p));
  return Status::Ok();
}

// Dynamic per-tensor in one launch: `ctas` CTAs, one cluster of them when more than one.
template <bool kBf16>
Status launch_fused(const Fp8ActQuantParams& p, int ctas, const GpuSpec& gpu, Stream stream) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(ctas));
  cfg.blockDim = dim3(static_cast<unsigned>(kActQuantFusedThreads));
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (ctas > 1) attr[n++] = cluster_launch_attr(static_cast<unsigned>(ctas), 1, 1);
  if (fp8_act_quant_uses_pdl(gpu, ctas)) attr[n++] = pdl_launch_attr();
  cfg.attrs = n > 0 ? attr : nullptr;
  cfg.numAttrs = n;
  LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, &smxx_fp8_act_quant_tensor_fused_kernel<kBf16>, p));
  return Status::Ok();
}

// The int8 kernel with kPerRow's geometry; a programmatic dependent launch by the same rule.
template <bool kBf16, bool kZeroPoint, bool kStatic>
Status launch_int8(const Int8ActQuantParams& p, int64_t k, const GpuSpec& gpu, Stream stream) {
  const Fp8ActQuantShape s = fp8_act_quant_shape(k, p.m, Fp8ActQuantOp::kPerRow);
  const bool pdl = fp8_act_quant_uses_pdl(gpu, s.blocks);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(s.blocks));
  cfg.blockDim = dim3(static_cast<unsigned>(s.threads_per_row), static_cast<unsigned>(s.rows_per_block));
  cfg.stream = stream;
  cudaLaunchAttribute attr[1] = {pdl_launch_attr()};
  cfg.attrs = pdl ? attr : nullptr;
  cfg.numAttrs = pdl ? 1 : 0;
  LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, &smxx_int8_act_quant_kernel<kBf16, kZeroPoint, kStatic>, p));
  return Status::Ok();
}

// Runs `enqueue` with `device` current, then gives the caller back its current device.
template <typename Enqueue>
Status on_device(int device, const Enqueue& enqueue) {
  DeviceGuard guard(device);
  if (!guard.ok()) return guard.status();
  return guard.finish(enqueue());
}

// Whether the one-launch per-tensor path may run (LOWBIT_ACT_QUANT_FUSED=0, read at every
// run(), keeps the general path: a measurement and test knob).
bool fused_allowed() {
  const char* env = std::getenv("LOWBIT_ACT_QUANT_FUSED");
  return env == nullptr || env[0] != '0';
}

template <bool kBf16>
Status launch_mode(const ActQuantDesc& d, const Fp8ActQuantParams& p, const GpuSpec& gpu, Stream stream) {
  switch (d.mode) {
    case ActQuantMode::kDynamicPerToken:
      return launch<kBf16, Fp8ActQuantOp::kPerRow>(p, d.k, d.m, gpu, stream);
    case ActQuantMode::kDynamicBlock1x128:
      return launch<kBf16, Fp8ActQuantOp::kGroup128>(p, d.k, p.scale_ld, gpu, stream);
    case ActQuantMode::kStaticPerTensor:
      return launch<kBf16, Fp8ActQuantOp::kTensorStatic>(p, d.k, d.m, gpu, stream);
    case ActQuantMode::kDynamicPerTensor: {
      const int ctas = fp8_act_quant_fused_ctas(d.m, d.k, gpu.cc >= 90 && build_has_code_for(gpu.cc, 90));
      if (ctas > 0 && fused_allowed()) return launch_fused<kBf16>(p, ctas, gpu, stream);
      // The amax word starts at +0 (bits 0): every amax is >= +0. The memset is not a kernel,
      // so the amax kernel after it starts in stream order whatever its attribute; the codes
      // kernel may start early and waits (griddepcontrol.wait) for the amax kernel.
      LOWBIT_CUDA_TRY(cudaMemsetAsync(p.amax_bits, 0, sizeof(unsigned int), stream));
      if (Status s = launch<kBf16, Fp8ActQuantOp::kTensorAmax>(p, d.k, d.m, gpu, stream); !s.ok())
        return s;
      return launch<kBf16, Fp8ActQuantOp::kTensorDynamic>(p, d.k, d.m, gpu, stream);
    }
    case ActQuantMode::kInt8PerToken:
    case ActQuantMode::kInt8PerTokenZeroPoint:
    case ActQuantMode::kInt8StaticPerTensor: break;  // int8_act_quant_launch()
  }
  return Status::Fail("lowbit: act_quant: unknown mode " + std::to_string(static_cast<int>(d.mode)));
}

}  // namespace

bool fp8_act_quant_uses_pdl(const GpuSpec& gpu, int64_t blocks) {
  if (gpu.cc < 90 || !build_has_code_for(gpu.cc, 90)) return false;
  const char* env = std::getenv("LOWBIT_ACT_QUANT_PDL");
  if (env != nullptr && (env[0] == '0' || env[0] == '1')) return env[0] == '1';
  return blocks * 2 <= gpu.sm_count;
}

Status act_quant_runs_on(int device) {
  const GpuSpec* gpu = nullptr;
  try {
    gpu = &gpu_spec(device);  // throws when the device does not exist
  } catch (const Error& e) {
    return Status::Fail(std::string(e.what()) + "; use Device::cpu()");
  }
  const std::string where = "cuda:" + std::to_string(device) + " (" + gpu->name + ", sm_" +
                            std::to_string(gpu->cc) + ")";
  if (gpu->cc < 80)
    return Status::Fail("lowbit: act_quant: the activation quantizer needs sm_80 or newer, " +
                        where + " is older");
  if (!build_has_code_for(gpu->cc, 80))
    return Status::Fail("lowbit: act_quant: this build has no machine code for " + where +
                        " (LOWBIT_CUDA_ARCHITECTURES=" LOWBIT_CUDA_ARCHS ")");
  return Status::Ok();
}

Status fp8_act_quant_launch(const ActQuantDesc& d, const ActQuantArgs& a, void* workspace,
                            Stream stream, int device) {
  Fp8ActQuantParams p{};
  p.x = static_cast<const uint4*>(a.x);
  p.x_row_vecs = d.row_stride() / 8;  // 8 f16/bf16 values per 16-byte vector
  p.q = static_cast<uint4*>(a.q);
  p.scales = a.scales;
  p.static_scale = d.mode == ActQuantMode::kStaticPerTensor ? a.static_scale : nullptr;
  p.amax_bits = d.mode == ActQuantMode::kDynamicPerTensor ? static_cast<unsigned int*>(workspace)
                                                          : nullptr;
  p.m = d.m;
  p.items = d.k / kActQuantItemElems;
  p.scale_ld = (d.m + 3) / 4 * 4;

  // The GPU's spec is read before switching devices: can_implement() read it already, so it
  // comes from the cache.
  const GpuSpec& gpu = gpu_spec(device);
  return on_device(device, [&] {
    return d.dtype == DType::kBF16 ? launch_mode<true>(d, p, gpu, stream) : launch_mode<false>(d, p, gpu, stream);
  });
}

Status int8_act_quant_launch(const ActQuantDesc& d, const ActQuantArgs& a, Stream stream, int device) {
  const bool is_static = d.mode == ActQuantMode::kInt8StaticPerTensor;
  const bool zero_point = d.mode == ActQuantMode::kInt8PerTokenZeroPoint || (is_static && d.int8_zero_point);
  Int8ActQuantParams p{};
  p.x = static_cast<const uint4*>(a.x);
  p.x_row_vecs = d.row_stride() / 8;  // 8 f16/bf16 values per 16-byte vector
  p.q = static_cast<uint4*>(a.q);
  p.scales = a.scales;
  p.zeros = zero_point ? a.zeros : nullptr;
  p.static_scale = is_static ? a.static_scale : nullptr;
  p.static_zero_point = is_static && zero_point ? a.static_zero_point : nullptr;
  p.m = d.m;
  p.items = d.k / kActQuantItemElems;
  const GpuSpec& gpu = gpu_spec(device);  // cached: can_implement() read it
  const bool bf16 = d.dtype == DType::kBF16;
  // One instance per (dtype, zero point, static).
  auto launch_dtype = [&](auto bf16_tag) {
    constexpr bool kBf16 = decltype(bf16_tag)::value;
    if (is_static)
      return zero_point ? launch_int8<kBf16, true, true>(p, d.k, gpu, stream)
                        : launch_int8<kBf16, false, true>(p, d.k, gpu, stream);
    return zero_point ? launch_int8<kBf16, true, false>(p, d.k, gpu, stream)
                      : launch_int8<kBf16, false, false>(p, d.k, gpu, stream);
  };
  return on_device(device, [&] {
    return bf16 ? launch_dtype(std::true_type{}) : launch_dtype(std::false_type{});
  });
}

}  // namespace lowbit::cuda
