// Host side of the sm80 mixed GEMM family: what it accepts, its plan, packing, workspace and
// the launches of one run() (docs/kernels/mixed_gemm.md).
#include "cuda/mixed_gemm/sm80_mixed_gemm_family.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "cuda/common/check.hpp"
#include "cuda/common/device_guard.hpp"
#include "cuda/mixed_gemm/sm80_mixed_gemm_params.hpp"
#include "cuda/mixed_gemm/tiled_gemm_check.hpp"
#include "lowbit/pack.hpp"

namespace lowbit::cuda {

namespace {

constexpr const char* kWho = "lowbit: sm80_mixed_gemm: ";

const MixedGemmKernels& kernels_for(DType act, int bits) {
  if (act == DType::kF16) return bits == 4 ? sm80_mixed_gemm_kernels_f16_w4() : sm80_mixed_gemm_kernels_f16_w8();
  return bits == 4 ? sm80_mixed_gemm_kernels_bf16_w4() : sm80_mixed_gemm_kernels_bf16_w8();
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

// Programmatic dependent launch of the GEMM kernel of `ctas` CTAs: sm_90 with sm_90 code in
// this build (griddepcontrol), where the plan pays for it (mixed_gemm_pdl_pays);
// LOWBIT_MIXED_GEMM_PDL=0 / 1 turns it off / on everywhere (a measurement knob). Contract, as
// for smxx_gemv: the weights, scales and zero points are read before griddepcontrol.wait,
// so the kernel before this one in the stream must not write them (they are a model's
// constants; after a device repack into the tiled layout, synchronize or launch anything in
// between).
bool uses_pdl(const GpuSpec& gpu, int64_t ctas) {
  if (gpu.cc < 90 || !build_has_code_for(gpu.cc, 90)) return false;
  const char* env = std::getenv("LOWBIT_MIXED_GEMM_PDL");
  if (env != nullptr && (env[0] == '0' || env[0] == '1')) return env[0] == '1';
  return mixed_gemm_pdl_pays(ctas, gpu.sm_count);
}

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// Occupancy of every configuration of (dtype, bits) for m tokens on `gpu`; also raises each
// kernel's shared-memory limit there (cudaFuncSetAttribute is per device). A row whose table
// variant needs more dynamic shared memory than the GPU grants one block (sm_86 / sm_89: 99
// KB) runs its small variant (fewer stages, kMixedGemmSmallSmemBytes); one that fits neither
// is marked so (ctas_per_sm 0) and refused by make_with_plan. Host-side calls only, at
// construction.
struct Occupancy {
  int ctas_per_sm[kMixedGemmConfigCount] = {};
  bool small[kMixedGemmConfigCount] = {};
  bool fits[kMixedGemmConfigCount] = {};
};

Occupancy occupancy(DType act, int bits, const GpuSpec& gpu, int64_t m) {
  const MixedGemmKernels& k = kernels_for(act, bits);
  DeviceGuard guard(gpu.device);
  guard.check();
  Occupancy occ;
  Status s;
  const int mm = static_cast<int>(std::min<int64_t>(m, 1 << 20));
  for (int c = 0; c < kMixedGemmConfigCount && s.ok(); ++c) {
    occ.small[c] = k.variant(c, false).max_smem_bytes > gpu.smem_per_block_optin;
    occ.fits[c] = k.variant(c, occ.small[c]).max_smem_bytes <= gpu.smem_per_block_optin;
    if (occ.fits[c]) s = k.prepare(c, occ.small[c], mm, &occ.ctas_per_sm[c]);
  }
  throw_if_error(guard.finish(std::move(s)));
  return occ;
}

class Sm80MixedGemmImpl final : public detail::GemmImpl {
 public:
  Sm80MixedGemmImpl(const GemmDesc& desc, const GpuSpec& gpu, const MixedGemmPlan& plan, bool small)
      : desc_(desc), device_(gpu.device), plan_(plan), small_(small),
        kernels_(&kernels_for(desc.a.dtype, desc.w.int_format.bits)) {
    const MixedGemmTileConfig& c = kMixedGemmConfigs[plan_.config];
    m_tiles_ = static_cast<int>((desc_.m + c.block_m - 1) / c.block_m);
    n_tiles_ = static_cast<int>((desc_.n + c.block_n - 1) / c.block_n);
    pdl_ = uses_pdl(gpu, static_cast<int64_t>(m_tiles_) * n_tiles_ * plan_.splits);
    const IntWeightFormat& f = desc_.w.int_format;
    if (f.act_order) {
      act_bytes_ = round_up(static_cast<size_t>(desc_.m) * static_cast<size_t>(tiled_act_order_max_k(desc_.k)) * 2, 256);
      gather_ = choose_act_gather_plan(desc_.m, desc_.k, tiled_act_order_max_k(desc_.k), gpu.sm_count,
                                       gpu.cc >= 90 && build_has_code_for(gpu.cc, 90));
    }
    if (plan_.split_mode == MixedGemmSplitMode::kWorkspace)
      partial_bytes_ = round_up(static_cast<size_t>(plan_.splits) * desc_.m * desc_.n * 4, 256);
  }

  std::string name() const override {
    const IntWeightFormat& f = desc_.w.int_format;
    return std::string(kSm80MixedGemmName) + "_" + dtype_name(desc_.a.dtype) + "_w" + std::to_string(f.bits) + "_" +
           kMixedGemmConfigs[plan_.config].tag + "_s" + std::to_string(plan_.splits) +
           (plan_.split_mode == MixedGemmSplitMode::kWorkspace ? "ws" : "") +
           (small_ ? "_st" + std::to_string(kernels_->variant(plan_.config, true).stages) : "");
  }
  std::string weight_layout() const override { return tiled_layout_name(desc_.w.int_format.bits); }
  std::size_t workspace_size() const override { return act_bytes_ + partial_bytes_; }
  PackedWeight pack(const IntWeight& w) const override { return pack_tiled(w); }

  Status run(const GemmArgs& args, void* workspace, Stream stream) const override {
    const IntWeightFormat& f = desc_.w.int_format;
    auto misaligned = [&](const char* what) {
      return Status::Fail(std::string(kWho) + what + " must be 16-byte aligned (" + desc_.describe() + ")");
    };
    if (!aligned16(args.a)) return misaligned("A (activations)");
    if (!aligned16(args.out)) return misaligned("out");
    if (!aligned16(args.w.data)) return misaligned("weight data");
    if (!aligned16(args.w.scales)) return misaligned("weight scales");
    if (f.zero == ZeroPoint::kInteger && !aligned16(args.w.zeros)) return misaligned("weight zero points");
    if (f.act_order && args.w.index == nullptr)
      return Status::Fail(std::string(kWho) + "act-order weights need the index buffer (WeightView::index)");
    if (workspace_size() > 0 && (reinterpret_cast<uintptr_t>(workspace) & 255) != 0)
      return Status::Fail(std::string(kWho) + "workspace must be 256-byte aligned");

    DeviceGuard guard(device_);
    if (!guard.ok()) return guard.status();
    return guard.finish(enqueue(args, workspace, stream));
  }

 private:
  Status enqueue(const GemmArgs& args, void* workspace, Stream stream) const {
    const IntWeightFormat& f = desc_.w.int_format;
    MixedGemmParams p{};
    p.a = args.a;
    p.w = args.w.data;
    p.scales = args.w.scales;
    p.zeros = f.zero == ZeroPoint::kInteger ? static_cast<const uint8_t*>(args.w.zeros) : nullptr;
    p.bias = desc_.has_bias ? args.bias : nullptr;
    p.out = args.out;
    p.m = static_cast<int>(desc_.m);
    p.n = static_cast<int>(desc_.n);
    p.k = static_cast<int>(desc_.k);
    p.lda = static_cast<int>(desc_.k);
    p.group_size = f.group_size;
    p.groups = f.group_size == 0 ? 1 : static_cast<int>(desc_.k / f.group_size);
    p.m_tiles = m_tiles_;
    p.n_tiles = n_tiles_;
    p.split_mode = static_cast<int>(plan_.split_mode);
    unsigned char* ws = static_cast<unsigned char*>(workspace);
    if (f.act_order) {
      // The activations' columns in the packed order (k' <= 2k + 64 columns; k' is read
      // from the index by both kernels).
      p.act_index = static_cast<const int32_t*>(args.w.index);
      if (Status s = sm80_mixed_gemm_permute_activations(desc_.a.dtype, args.a, p.m, p.k, p.act_index, ws, gather_, stream);
          !s.ok())
        return s;
      p.a = ws;
    }
    if (plan_.split_mode == MixedGemmSplitMode::kWorkspace) p.partials = reinterpret_cast<float*>(ws + act_bytes_);
    if (Status s = kernels_->launch(p, plan_.config, small_, plan_.splits, pdl_, stream); !s.ok()) return s;
    if (plan_.split_mode == MixedGemmSplitMode::kWorkspace)
      return sm80_mixed_gemm_reduce_splits(desc_.a.dtype, p.partials, plan_.splits, p.m, p.n,
                                           f.group_size == 0 ? args.w.scales : nullptr, p.bias, args.out, stream);
    return Status::Ok();
  }

  GemmDesc desc_;
  int device_;
  MixedGemmPlan plan_;
  bool small_;  // the row's small shared-memory variant (occupancy())
  const MixedGemmKernels* kernels_;
  bool pdl_ = false;  // uses_pdl()
  int m_tiles_ = 0, n_tiles_ = 0;
  size_t act_bytes_ = 0;      // act-order: the permuted activations
  ActGatherPlan gather_;      // act-order: how they are gathered
  size_t partial_bytes_ = 0;  // workspace split-K: fp32 partial sums
};

}  // namespace

Status sm80_mixed_gemm_runs_on(const GpuSpec& gpu) {
  if (gpu.cc < 80)
    return Status::Fail(std::string(kWho) + "needs compute capability 8.0 or newer (mma.sync bf16, cp.async); " +
                        gpu.name + " is sm_" + std::to_string(gpu.cc));
  if (!build_has_code_for(gpu.cc, 80))
    return Status::Fail(std::string(kWho) + "this build has no sm_80+ code that runs on sm_" + std::to_string(gpu.cc) +
                        " (LOWBIT_CUDA_ARCHITECTURES)");
  return Status::Ok();
}

Status sm80_mixed_gemm_can_implement(const GemmDesc& d, const GpuSpec& gpu) {
  (void)gpu;
  return tiled_gemm_check(d, kWho);
}

namespace {

// Clusters of `splits` CTAs of config c resident at once for m tokens (after occupancy(),
// which raised the kernels' shared-memory limits); 0 where the row does not fit.
int resident_clusters(DType act, int bits, const GpuSpec& gpu, const Occupancy& occ, int64_t m, int c, int splits) {
  if (!occ.fits[c]) return 0;
  int clusters = 0;
  DeviceGuard guard(gpu.device);
  guard.check();
  throw_if_error(guard.finish(kernels_for(act, bits).clusters(
      c, occ.small[c], static_cast<int>(std::min<int64_t>(m, 1 << 20)), splits, &clusters)));
  return clusters;
}

}  // namespace

int sm80_mixed_gemm_resident_clusters(const GemmDesc& d, const GpuSpec& gpu, int config, int splits) {
  if (config < 0 || config >= kMixedGemmConfigCount || splits < 2 || splits > 8 || gpu.cc < 90 ||
      !build_has_code_for(gpu.cc, 90))
    return 0;
  const Occupancy occ = occupancy(d.a.dtype, d.w.int_format.bits, gpu, d.m);
  return resident_clusters(d.a.dtype, d.w.int_format.bits, gpu, occ, d.m, config, splits);
}

MixedGemmPlan sm80_mixed_gemm_plan(const GemmDesc& d, const GpuSpec& gpu) {
  MixedGemmProblem p;
  p.m = d.m;
  p.n = d.n;
  p.k = d.k;
  p.bits = d.w.int_format.bits;
  p.sm_count = gpu.sm_count;
  p.cc = build_has_code_for(gpu.cc, 90) ? gpu.cc : std::min(gpu.cc, 89);
  const Occupancy occ = occupancy(d.a.dtype, p.bits, gpu, d.m);
  for (int c = 0; c < kMixedGemmConfigCount; ++c) p.ctas_per_sm[c] = occ.ctas_per_sm[c];
  if (p.cc >= 90) {
    for (int c = 0; c < kMixedGemmConfigCount; ++c)
      if (occ.fits[c])
        for (int e = 1; e <= 3; ++e) p.resident_clusters[c][e] = resident_clusters(d.a.dtype, p.bits, gpu, occ, d.m, c, 1 << e);
  }
  MixedGemmPlan plan = choose_mixed_gemm_plan(p);
  // LOWBIT_SM80_MIXED_PLAN=<tag>[,<splits>] (e.g. "t16n128,2") forces a plan: a measurement
  // knob, as sm90_mixed_gemm's. A configuration that does not fit this GPU, or splits outside
  // 1..8, leave the heuristic's choice.
  if (const char* env = std::getenv("LOWBIT_SM80_MIXED_PLAN")) {
    const std::string spec(env);
    const size_t comma = spec.find(',');
    const int c = mixed_gemm_config_index(spec.substr(0, comma).c_str());
    const int splits = comma == std::string::npos ? plan.splits : std::atoi(spec.c_str() + comma + 1);
    if (c >= 0 && occ.fits[c] && splits >= 1 && splits <= 8) {
      plan.config = c;
      plan.splits = splits;
      plan.split_mode = mixed_gemm_split_mode(splits, p.cc);
    }
  }
  return plan;
}

std::unique_ptr<detail::GemmImpl> sm80_mixed_gemm_make_with_plan(const GemmDesc& desc, const GpuSpec& gpu,
                                                                 const MixedGemmPlan& plan) {
  if (plan.config < 0 || plan.config >= kMixedGemmConfigCount || plan.splits < 1 || plan.splits > 8)
    throw Error(std::string(kWho) + "invalid plan " + std::to_string(plan.config) + "/" + std::to_string(plan.splits));
  if (plan.split_mode == MixedGemmSplitMode::kCluster && !build_has_code_for(gpu.cc, 90))
    throw Error(std::string(kWho) + "cluster split-K needs sm_90 code for this GPU (sm_" + std::to_string(gpu.cc) + ")");
  if ((plan.splits > 1) != (plan.split_mode != MixedGemmSplitMode::kNone))
    throw Error(std::string(kWho) + "split mode does not match splits=" + std::to_string(plan.splits));
  const Occupancy occ = occupancy(desc.a.dtype, desc.w.int_format.bits, gpu, desc.m);  // sets the smem limits
  if (!occ.fits[plan.config])
    throw Error(std::string(kWho) + "configuration " + kMixedGemmConfigs[plan.config].tag + " needs " +
                std::to_string(kernels_for(desc.a.dtype, desc.w.int_format.bits).variant(plan.config, true).max_smem_bytes) +
                " bytes of shared memory per block; " + gpu.name + " allows " + std::to_string(gpu.smem_per_block_optin));
  return std::make_unique<Sm80MixedGemmImpl>(desc, gpu, plan, occ.small[plan.config]);
}

std::unique_ptr<detail::GemmImpl> sm80_mixed_gemm_make(const GemmDesc& desc, const GpuSpec& gpu) {
  return sm80_mixed_gemm_make_with_plan(desc, gpu, sm80_mixed_gemm_plan(desc, gpu));
}

}  // namespace lowbit::cuda
