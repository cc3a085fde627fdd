// Host side of the sm89 fp8 GEMM family: what it accepts, its plan, packing, workspace and the
// launches of one run() (docs/kernels/fp8_gemm.md, "sm89_fp8_gemm"). The same implementation
// serves sm80_int8_gemm (int8 weights: the kernel template over int8, scaled mode only;
// int8_gemm/sm80_int8_gemm_family.cpp holds that family's own checks).
#include "cuda/fp8_gemm/sm89_fp8_gemm_family.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "cuda/common/check.hpp"
#include "cuda/common/device_guard.hpp"
#include "cuda/fp8_gemm/fp8_gemm_common.hpp"
#include "cuda/fp8_gemm/sm89_fp8_gemm_params.hpp"
#include "cuda/int8_gemm/int8_gemm_common.hpp"

namespace lowbit::cuda {

namespace {

constexpr const char* kWho = "lowbit: sm89_fp8_gemm: ";
constexpr const char* kInt8Who = "lowbit: sm80_int8_gemm: ";

bool is_int8(const GemmDesc& d) { return d.w.kind == WeightKind::kInt8; }
const char* who_of(const GemmDesc& d) { return is_int8(d) ? kInt8Who : kWho; }

bool aligned(const void* p, uintptr_t bytes) { return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0; }

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// The kernels of a problem: int8 (sm80_int8_gemm), fp8 block or fp8 scaled mode.
const Sm89Fp8GemmKernels& kernels_for(const GemmDesc& d) {
  if (is_int8(d)) return sm80_int8_gemm_kernels();
  return fp8_gemm_mode(d) == Fp8GemmMode::kBlock ? sm89_fp8_gemm_kernels_block() : sm89_fp8_gemm_kernels_scaled();
}

// m as the occupancy queries take it (the shared memory of a launch stops growing at one
// token tile, so any m past 2^20 behaves like 2^20).
int occupancy_m(const GemmDesc& d) { return static_cast<int>(d.m < (1 << 20) ? d.m : (1 << 20)); }

// Programmatic dependent launch: sm_90 code on an sm_90 GPU, unless `env`=0.
bool uses_pdl(const GpuSpec& gpu, const char* env_name) {
  const char* env = std::getenv(env_name);
  if (env != nullptr && env[0] == '0') return false;
  return gpu.cc >= 90 && build_has_code_for(gpu.cc, 90);
}

bool cluster_split_runs_on(const GpuSpec& gpu) { return gpu.cc >= 90 && build_has_code_for(gpu.cc, 90); }

class Sm89Fp8GemmImpl final : public detail::GemmImpl {
 public:
  Sm89Fp8GemmImpl(const GemmDesc& desc, const GpuSpec& gpu, const Sm89Fp8Plan& plan)
      : desc_(desc),
        device_(gpu.device),
        plan_(plan),
        int8_(is_int8(desc)),
        block_(!int8_ && fp8_gemm_mode(desc) == Fp8GemmMode::kBlock),
        pdl_(int8_ ? sm80_int8_gemm_uses_pdl(gpu) : sm89_fp8_gemm_uses_pdl(gpu)),
        who_(who_of(desc)),
        kernels_(&kernels_for(desc)) {
    const Sm89Fp8TileConfig& c = kSm89Fp8Configs[plan_.config];
    m_tiles_ = (desc_.m + c.block_m - 1) / c.block_m;
    n_tiles_ = (desc_.n + c.block_n - 1) / c.block_n;
    // A ceiling on the CTAs per SM: enough dynamic shared memory that one more CTA does not fit
    // (the runtime's own 1 KB per CTA comes on top), within what the kernel may use. Only where
    // that pads the launch (the kernel name then ends in _c<cap>).
    if (plan_.ctas_per_sm_cap > 0) {
      const int floor = (gpu.smem_per_sm / (plan_.ctas_per_sm_cap + 1) + 1 + 127) / 128 * 128;
      if (floor > kernels_->smem_bytes(plan_.config, occupancy_m(desc_)) &&
          floor <= kernels_->smem_bytes(plan_.config, c.block_m))
        smem_floor_ = floor;
    }
    if (plan_.split_mode == Sm89Fp8SplitMode::kWorkspace)
      partial_bytes_ = round_up(static_cast<size_t>(plan_.splits) * static_cast<size_t>(desc_.m) *
                                    static_cast<size_t>(desc_.n) * sizeof(float),
                                256);
  }

  // "sm89_fp8_gemm_scaled_t16_s2", "sm80_int8_gemm_t16_s2ws" (ws: the workspace split).
  std::string name() const override {
    const std::string family = int8_ ? std::string("sm80_int8_gemm") + "_" : std::string(kSm89Fp8GemmName) + (block_ ? "_block_" : "_scaled_");
    return family + kSm89Fp8Configs[plan_.config].tag + "_s" + std::to_string(plan_.splits) +
           (plan_.split_mode == Sm89Fp8SplitMode::kWorkspace ? "ws" : "") +
           (smem_floor_ > 0 ? "_c" + std::to_string(plan_.ctas_per_sm_cap) : "");
  }
  std::string weight_layout() const override { return int8_ ? kInt8NkLayout : kFp8NkLayout; }
  std::size_t workspace_size() const override { return partial_bytes_; }
  PackedWeight pack(const Fp8Tensor& w) const override { return pack_fp8_nk(w, desc_, who_); }
  PackedWeight pack(const Int8Tensor& w) const override { return pack_int8_nk(w, desc_, who_); }

  Status run(const GemmArgs& args, void* workspace, Stream stream) const override {
    auto misaligned = [&](const char* what, int bytes) {
      return Status::Fail(std::string(who_) + what + " must be " + std::to_string(bytes) + "-byte aligned (" +
                          desc_.describe() + ")");
    };
    // 16 bytes: the cp.async copies of A and W and the 16-byte stores of out (and of the
    // workspace partials), and the block-mode scale windows; int8: 4 bytes for the fp32 /
    // int32 element loads of scales and zero points (and the bias, read by 2-byte elements:
    // 4 is asked so that a misplaced pointer shows early).
    if (!aligned(args.a, 16)) return misaligned("A (activations)", 16);
    if (!aligned(args.out, 16)) return misaligned("out", 16);
    if (!aligned(args.w.data, 16)) return misaligned("weight data", 16);
    if (block_ && !aligned(args.a_scales, 16)) return misaligned("A scales (block mode)", 16);
    if (block_ && !aligned(args.w.scales, 16)) return misaligned("weight scales (block mode)", 16);
    if (int8_) {
      if (!aligned(args.a_scales, 4)) return misaligned("A scales", 4);
      if (!aligned(args.w.scales, 4)) return misaligned("weight scales", 4);
      if (desc_.has_bias && !aligned(args.bias, 4)) return misaligned("bias", 4);
      if (desc_.a.int8_zero_point) {
        // Gemm::run() checked a_zeros; the weight row sums are the packed weight's `zeros`.
        if (args.w.zeros == nullptr)
          return Status::Fail(std::string(who_) + "weight zeros (the row sums of layout int8_nk) is null; " +
                              "activations with a zero point need it (" + desc_.describe() + ")");
        if (!aligned(args.a_zeros, 4)) return misaligned("A zero points", 4);
        if (!aligned(args.w.zeros, 4)) return misaligned("weight zeros (row sums)", 4);
      }
    }
    if (partial_bytes_ > 0 && !aligned(workspace, 16)) return misaligned("workspace", 16);

    DeviceGuard guard(device_);
    if (!guard.ok()) return guard.status();
    return guard.finish(enqueue(args, workspace, stream));
  }

 private:
  Status enqueue(const GemmArgs& args, void* workspace, Stream stream) const {
    Sm89Fp8GemmParams p{};
    p.a = static_cast<const uint8_t*>(args.a);
    p.w = static_cast<const uint8_t*>(args.w.data);
    p.sa = static_cast<const float*>(args.a_scales);
    p.sw = static_cast<const float*>(args.w.scales);
    p.bias = desc_.has_bias ? args.bias : nullptr;
    p.out = args.out;
    p.partials = plan_.split_mode == Sm89Fp8SplitMode::kWorkspace ? static_cast<float*>(workspace) : nullptr;
    p.m = static_cast<int>(desc_.m);
    p.n = static_cast<int>(desc_.n);
    p.k = static_cast<int>(desc_.k);
    p.m4 = static_cast<int>((desc_.m + 3) / 4 * 4);
    p.k_blocks = static_cast<int>(fp8_k_blocks(desc_.k));
    p.n_blocks = static_cast<int>((desc_.n + 127) / 128);
    // int8: per-token x per-channel scales; the zero-point term with the weight row sums.
    p.sa_row = int8_ || desc_.a.fp8_scaling == Fp8Scaling::kPerRow ? 1 : 0;
    p.sw_row = int8_ || desc_.w.fp8.scaling == Fp8Scaling::kPerRow ? 1 : 0;
    const bool zp = int8_ && desc_.a.int8_zero_point;
    p.za = zp ? static_cast<const int32_t*>(args.a_zeros) : nullptr;
    p.wsum = zp ? static_cast<const int32_t*>(args.w.zeros) : nullptr;
    p.m_tiles = static_cast<int>(m_tiles_);
    p.n_tiles = static_cast<int>(n_tiles_);
    p.split_mode = static_cast<int>(plan_.split_mode);
    p.out_bf16 = desc_.out_dtype == DType::kBF16 ? 1 : 0;
    if (Status s = kernels_->launch(p, plan_.config, plan_.splits, pdl_, smem_floor_, stream); !s.ok()) return s;
    // Block mode and int8 write scaled partials (sm89_fp8_gemm_epilogue.cuh): the reduction
    // only sums them in split order and adds the bias.
    if (plan_.split_mode == Sm89Fp8SplitMode::kWorkspace)
      return sm89_fp8_gemm_reduce_splits(p, /*partials_scaled=*/block_ || int8_, plan_.splits, stream);
    return Status::Ok();
  }

  GemmDesc desc_;
  int device_;
  Sm89Fp8Plan plan_;
  bool int8_;  // sm80_int8_gemm
  bool block_;
  bool pdl_;
  const char* who_;
  const Sm89Fp8GemmKernels* kernels_;
  int64_t m_tiles_ = 0, n_tiles_ = 0;
  size_t partial_bytes_ = 0;  // workspace split-K: fp32 partial sums (splits, m, n)
  int smem_floor_ = 0;        // the launch's least dynamic shared memory (plan_.ctas_per_sm_cap)
};

}  // namespace

bool sm89_fp8_gemm_uses_pdl(const GpuSpec& gpu) { return uses_pdl(gpu, "LOWBIT_FP8_GEMM_PDL"); }

bool sm80_int8_gemm_uses_pdl(const GpuSpec& gpu) { return uses_pdl(gpu, "LOWBIT_INT8_GEMM_PDL"); }

Status sm89_fp8_gemm_runs_on(const GpuSpec& gpu) {
  if (gpu.cc < 89)
    return Status::Fail(std::string(kWho) + "needs compute capability 8.9 or newer (mma.sync with e4m3 operands); " +
                        gpu.name + " is sm_" + std::to_string(gpu.cc));
  if (!build_has_code_for(gpu.cc, 89))
    return Status::Fail(std::string(kWho) + "this build has no sm_89+ code that runs on sm_" + std::to_string(gpu.cc) +
                        " (LOWBIT_CUDA_ARCHITECTURES)");
  return Status::Ok();
}

Status sm89_fp8_gemm_can_implement(const GemmDesc& d, const GpuSpec& gpu) {
  (void)gpu;
  if (Status s = fp8_gemm_check(d, kWho); !s.ok()) return s;
  auto fail = [&](const std::string& why) { return Status::Fail(std::string(kWho) + why + " (" + d.describe() + ")"); };
  // 32-bit tile and column arithmetic in the kernel; the grid's x dimension counts tiles.
  if (d.m > (int64_t{1} << 24)) return fail("needs m <= 2^24, m=" + std::to_string(d.m));
  if (d.n > (int64_t{1} << 24)) return fail("needs n <= 2^24, n=" + std::to_string(d.n));
  if (d.k > (int64_t{1} << 30)) return fail("needs k <= 2^30, k=" + std::to_string(d.k));
  if (d.m * d.n > (int64_t{1} << 40)) return fail("needs m * n <= 2^40");
  return Status::Ok();
}

Sm89Fp8Plan sm89_fp8_gemm_plan(const GemmDesc& d, const GpuSpec& gpu) {
  Sm89Fp8Problem p;
  p.m = d.m;
  p.n = d.n;
  p.k = d.k;
  p.sm_count = gpu.sm_count;
  p.cluster_ok = cluster_split_runs_on(gpu);
  p.wide_tile_for_waves = !is_int8(d);
  // Occupancy of every configuration for this m on this GPU (host-side runtime calls, at
  // construction; also raises each kernel's shared-memory limit on the device).
  const Sm89Fp8GemmKernels& k = kernels_for(d);
  DeviceGuard guard(gpu.device);
  guard.check();
  Status s;
  const int mm = occupancy_m(d);
  for (int c = 0; c < kSm89Fp8ConfigCount && s.ok(); ++c) s = k.prepare(c, mm, &p.ctas_per_sm[c]);
  for (int c = 0; c < kSm89Fp8ConfigCount && s.ok() && p.cluster_ok; ++c)
    for (int e = 1; e <= 3 && s.ok() && p.ctas_per_sm[c] > 0; ++e) s = k.clusters(c, mm, 1 << e, &p.resident_clusters[c][e]);
  throw_if_error(guard.finish(std::move(s)));
  return choose_sm89_fp8_plan(p);
}

int sm89_fp8_gemm_ctas_per_sm(const GemmDesc& d, const GpuSpec& gpu, int config) {
  if (config < 0 || config >= kSm89Fp8ConfigCount)
    throw Error(std::string(who_of(d)) + "no tile configuration " + std::to_string(config));
  const Sm89Fp8GemmKernels& k = kernels_for(d);
  int ctas_per_sm = 0;
  DeviceGuard guard(gpu.device);
  guard.check();
  throw_if_error(guard.finish(k.prepare(config, occupancy_m(d), &ctas_per_sm)));
  return ctas_per_sm;
}

int sm89_fp8_gemm_resident_clusters(const GemmDesc& d, const GpuSpec& gpu, int config, int splits) {
  if (config < 0 || config >= kSm89Fp8ConfigCount || splits < 2 || splits > kSm89Fp8MaxSplits ||
      !cluster_split_runs_on(gpu))
    return 0;
  const Sm89Fp8GemmKernels& k = kernels_for(d);
  const int mm = occupancy_m(d);
  int ctas_per_sm = 0, clusters = 0;
  DeviceGuard guard(gpu.device);
  guard.check();
  Status s = k.prepare(config, mm, &ctas_per_sm);
  if (s.ok() && ctas_per_sm > 0) s = k.clusters(config, mm, splits, &clusters);
  throw_if_error(guard.finish(std::move(s)));
  return clusters;
}

std::unique_ptr<detail::GemmImpl> sm89_8bit_gemm_make_impl(const GemmDesc& desc, const GpuSpec& gpu,
                                                           const Sm89Fp8Plan& plan) {
  const char* who = who_of(desc);
  if (plan.config < 0 || plan.config >= kSm89Fp8ConfigCount || plan.splits < 1 || plan.splits > kSm89Fp8MaxSplits)
    throw Error(std::string(who) + "invalid plan: config " + std::to_string(plan.config) + ", splits " +
                std::to_string(plan.splits) + " (configs 0.." + std::to_string(kSm89Fp8ConfigCount - 1) +
                ", splits 1.." + std::to_string(kSm89Fp8MaxSplits) + ")");
  if (plan.ctas_per_sm_cap < 0)
    throw Error(std::string(who) + "invalid plan: ctas_per_sm_cap " + std::to_string(plan.ctas_per_sm_cap) +
                " (0 for none, or at least 1)");
  if ((plan.splits > 1) != (plan.split_mode != Sm89Fp8SplitMode::kNone))
    throw Error(std::string(who) + "split mode does not match splits=" + std::to_string(plan.splits));
  if (plan.split_mode == Sm89Fp8SplitMode::kCluster && !cluster_split_runs_on(gpu))
    throw Error(std::string(who) + "cluster split-K needs sm_90 code for this GPU (sm_" + std::to_string(gpu.cc) +
                ")");
  const Sm89Fp8TileConfig& c = kSm89Fp8Configs[plan.config];
  const int64_t tiles = (desc.m + c.block_m - 1) / c.block_m * ((desc.n + c.block_n - 1) / c.block_n);
  if (tiles >= (int64_t{1} << 31))
    throw Error(std::string(who) + "plan " + plan.describe() + " makes " + std::to_string(tiles) +
                " tiles, more than a grid holds (" + desc.describe() + ")");
  const Sm89Fp8GemmKernels& k = kernels_for(desc);
  // Raises the kernel's dynamic shared-memory limit on the GPU it will run on (per device).
  const int ctas_per_sm = sm89_fp8_gemm_ctas_per_sm(desc, gpu, plan.config);
  if (ctas_per_sm < 1)
    throw Error(std::string(who) + "configuration " + c.tag + " does not fit one SM of " + gpu.name + " (" +
                std::to_string(k.smem_bytes(plan.config, occupancy_m(desc))) + " bytes of shared memory, " +
                std::to_string(gpu.smem_per_block_optin) + " per block)");
  return std::make_unique<Sm89Fp8GemmImpl>(desc, gpu, plan);
}

std::unique_ptr<detail::GemmImpl> sm89_fp8_gemm_make_with_plan(const GemmDesc& desc, const GpuSpec& gpu,
                                                               const Sm89Fp8Plan& plan) {
  return sm89_8bit_gemm_make_impl(desc, gpu, plan);
}

std::unique_ptr<detail::GemmImpl> sm89_fp8_gemm_make(const GemmDesc& desc, const GpuSpec& gpu) {
  return sm89_fp8_gemm_make_with_plan(desc, gpu, sm89_fp8_gemm_plan(desc, gpu));
}

}  // namespace lowbit::cuda
