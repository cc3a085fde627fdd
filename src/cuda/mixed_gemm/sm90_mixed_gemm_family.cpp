// Host side of sm90_mixed_gemm: what it accepts, the plan, the tensor maps and the launches.
#include "cuda/mixed_gemm/sm90_mixed_gemm_family.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "cuda/common/check.hpp"
#include "cuda/common/device_guard.hpp"
#include "cuda/common/tensor_map.hpp"
#include "cuda/mixed_gemm/sm80_mixed_gemm_params.hpp"
#include "cuda/mixed_gemm/sm90_mixed_gemm_params.hpp"
#include "cuda/mixed_gemm/tiled_gemm_check.hpp"
#include "lowbit/dtype.hpp"
#include "lowbit/pack.hpp"

namespace lowbit::cuda {

namespace {

// Programmatic dependent launch (the family only runs with sm_90a code): the kernel's producer
// requests the first stages' weights, scales and zero points before griddepcontrol.wait.
// LOWBIT_MIXED_GEMM_PDL=0 turns it off (a measurement knob, shared with sm80_mixed_gemm).
bool uses_pdl() {
  const char* env = std::getenv("LOWBIT_MIXED_GEMM_PDL");
  return env == nullptr || env[0] != '0';
}

constexpr const char* kWho = "lowbit: sm90_mixed_gemm: ";

bool aligned(const void* p, uintptr_t a) { return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0; }

const Sm90MixedKernels& kernels_for(DType act, int bits) {
  if (act == DType::kF16) return bits == 4 ? sm90_mixed_gemm_kernels_f16_w4() : sm90_mixed_gemm_kernels_f16_w8();
  return bits == 4 ? sm90_mixed_gemm_kernels_bf16_w4() : sm90_mixed_gemm_kernels_bf16_w8();
}

class Sm90MixedGemmImpl final : public detail::GemmImpl {
 public:
  Sm90MixedGemmImpl(const GemmDesc& desc, const GpuSpec& gpu, const Sm90MixedPlan& plan)
      : d_(desc), device_(gpu.device), sm_count_(gpu.sm_count), pdl_(uses_pdl()), plan_(plan),
        kernels_(&kernels_for(desc.a.dtype, desc.w.int_format.bits)) {
    if (plan_.config < 0 || plan_.config >= kSm90MixedConfigCount)
      throw Error(std::string(kWho) + "no configuration " + std::to_string(plan_.config));
    if (!sm90_mixed_has_kernel(kSm90MixedConfigs[plan_.config], d_.a.dtype == DType::kBF16, d_.w.int_format.bits))
      throw Error(std::string(kWho) + "configuration " + kSm90MixedConfigs[plan_.config].tag +
                  " has no kernel for " + dtype_name(d_.a.dtype) + " activations x " +
                  std::to_string(d_.w.int_format.bits) +
                  "-bit weights (its 128-column stages would be decoded by halves, measured slower than "
                  "64-column stages: docs/kernels/mixed_gemm.md sm90 v18)");
    if (plan_.pre_stages < 0)
      throw Error(std::string(kWho) + "pre-wait stages must be >= 0 (0: every stage), got " +
                  std::to_string(plan_.pre_stages));
    const int64_t k_blocks = sm90_mixed_k_blocks(kSm90MixedConfigs[plan_.config], d_.k);
    if (plan_.splits < 1 || plan_.splits > k_blocks)
      throw Error(std::string(kWho) + "splits must be in 1.." + std::to_string(k_blocks) + ", got " +
                  std::to_string(plan_.splits));
    if (plan_.sk_grid < 0) throw Error(std::string(kWho) + "the stream-K grid must be >= 0, got " + std::to_string(plan_.sk_grid));
    if (plan_.sk_grid > 0 && d_.w.int_format.act_order)
      throw Error(std::string(kWho) + "a stream-K tail needs k known on the host; act-order weights have k' in their index (" +
                  d_.describe() + ")");
    if (plan_.sk_grid > 0) {
      const Sm90MixedConfig& c = kSm90MixedConfigs[plan_.config];
      tail_ = sm90_mixed_tail((d_.n + kSm90MixedBlockCh - 1) / kSm90MixedBlockCh, k_blocks, plan_.sk_grid);
      if (!sm90_mixed_tail_config(c) || plan_.splits != 1 || d_.m > c.block_tokens || !tail_.valid)
        throw Error(std::string(kWho) + "a stream-K tail over " + std::to_string(plan_.sk_grid) + " CTAs needs a token tile of at most 128 (" +
                    c.tag + ": " + std::to_string(c.block_tokens) + "), one split, one token tile (m <= " +
                    std::to_string(c.block_tokens) + ") and at least as many tail iterations as CTAs (" + d_.describe() + ")");
    }
    {
      DeviceGuard guard(device_);
      guard.check();
      throw_if_error(guard.finish(kernels_->prepare(plan_.config)));
    }
    if (!tensor_map_available()) throw Error(std::string(kWho) + "the driver has no cuTensorMapEncodeTiled");
    // Workspace: [act-order: the re-extented tensor maps, the gathered activations (m, k' <= 2k + 64)]
    // [split-K / stream-K partial sums].
    if (d_.w.int_format.act_order) {
      act_maps_bytes_ = round256(sizeof(CUtensorMap) * kSm90MixedActOrderMaps);
      act_bytes_ = round256(static_cast<std::size_t>(d_.m) * static_cast<std::size_t>(tiled_act_order_max_k(d_.k)) * 2);
      gather_ = choose_act_gather_plan(d_.m, d_.k, tiled_act_order_max_k(d_.k), gpu.sm_count, true);
    }
  }

  std::string name() const override {
    return std::string(kSm90MixedGemmName) + "_" + dtype_name(d_.a.dtype) + "_w" +
           std::to_string(d_.w.int_format.bits) + "_" + kSm90MixedConfigs[plan_.config].tag + "_s" +
           std::to_string(plan_.splits) + (plan_.sk_grid > 0 ? "_sk" : "");
  }
  std::string weight_layout() const override { return tiled_layout_name(d_.w.int_format.bits); }
  std::size_t workspace_size() const override { return act_maps_bytes_ + act_bytes_ + partial_bytes(); }
  PackedWeight pack(const IntWeight& w) const override { return pack_tiled(w); }

  Status run(const GemmArgs& args, void* workspace, Stream stream) const override {
    const IntWeightFormat& f = d_.w.int_format;
    auto misaligned = [&](const char* what) {
      return Status::Fail(std::string(kWho) + what + " must be 16-byte aligned (" + d_.describe() + ")");
    };
    if (!aligned(args.a, 16)) return misaligned("A (activations)");
    if (!aligned(args.out, 16)) return misaligned("out");
    if (!aligned(args.w.data, 16)) return misaligned("weight data");
    if (!aligned(args.w.scales, 16)) return misaligned("weight scales");
    if (f.zero == ZeroPoint::kInteger && !aligned(args.w.zeros, 16)) return misaligned("weight zero points");
    if (f.act_order && args.w.index == nullptr)
      return Status::Fail(std::string(kWho) + "act-order weights need the index buffer (WeightView::index)");
    if (d_.has_bias && !aligned(args.bias, 2))
      return Status::Fail(std::string(kWho) + "bias must be 2-byte aligned (" + d_.describe() + ")");
    if (workspace_size() > 0) {
      if (workspace == nullptr)
        return Status::Fail(std::string(kWho) + "needs workspace_size() bytes of workspace (" + d_.describe() + ")");
      // 16 bytes for the partial sums; the act-order tensor maps need 64 (sm80_mixed_gemm's 256).
      if (!aligned(workspace, f.act_order ? 256 : 16))
        return Status::Fail(std::string(kWho) + "workspace must be " + (f.act_order ? "256" : "16") +
                            "-byte aligned (" + d_.describe() + ")");
    }
    DeviceGuard guard(device_);
    if (!guard.ok()) return guard.status();
    return guard.finish(enqueue(args, workspace, reinterpret_cast<cudaStream_t>(stream)));
  }

 private:
  Status enqueue(const GemmArgs& args, void* workspace, cudaStream_t st) const {
    const IntWeightFormat& f = d_.w.int_format;
    const int bits = f.bits;
    const Sm90MixedConfig& c = kSm90MixedConfigs[plan_.config];
    unsigned char* const ws = static_cast<unsigned char*>(workspace);
    // Act-order: the activations' columns in the packed order (k' of them, k' read from the index
    // on the device; gathered below, after the maps kernel), which the maps below describe with k
    // as a placeholder until sm90_mixed_gemm_act_order_maps() re-extents their copies.
    const void* a = f.act_order ? static_cast<const void*>(ws + act_maps_bytes_) : args.a;
    // x: (m, k) 16-bit, boxes of block_tokens rows x 64 columns (128 bytes: the swizzle span);
    // a stage of 128 columns takes two. The last token tile from a second map whose boxes hold
    // its rows rounded up to 8 where at least 3/8 of the tile lies past m (the TMA's zero fill of
    // rows past m is slow; sm90_mixed_x_last_rows()): the shared-memory rows past its box keep
    // what they held (an output token depends on its own activation row only, and tokens >= m
    // are never stored).
    CUtensorMap map_x{}, map_x_last{}, map_w{};
    const int x_last_rows = sm90_mixed_x_last_rows(d_.m, c.block_tokens);
    if (Status s = encode_tensor_map_2d(&map_x, CU_TENSOR_MAP_DATA_TYPE_UINT16, a, d_.m, d_.k, d_.k * 2,
                                        c.block_tokens, kSm90MixedBlockK, CU_TENSOR_MAP_SWIZZLE_128B, kWho, "A");
        !s.ok())
      return s;
    if (Status s = encode_tensor_map_2d(&map_x_last, CU_TENSOR_MAP_DATA_TYPE_UINT16, a, d_.m, d_.k, d_.k * 2,
                                        x_last_rows, kSm90MixedBlockK, CU_TENSOR_MAP_SWIZZLE_128B, kWho, "A");
        !s.ok())
      return s;
    // w: strips of 16 channels (2 k bits bytes each) as rows of k bits / 2 u32; a box is the
    // 8 strips of a channel tile x one stage's columns (32 bits u32 per 64 columns = 128 bits
    // bytes) where that fits a box (at most 256 u32), else x 64 columns (8-bit stages of 128
    // columns: two boxes; sm90_mixed_w_one_box()).
    const int w_box = sm90_mixed_w_one_box(c.block_k, bits) ? c.block_k / 64 * 32 * bits : 32 * bits;
    if (Status s = encode_tensor_map_2d(&map_w, CU_TENSOR_MAP_DATA_TYPE_UINT32, args.w.data, d_.n / 16,
                                        d_.k * bits / 2, d_.k * bits * 2, 8, w_box, CU_TENSOR_MAP_SWIZZLE_NONE,
                                        kWho, "the packed weights");
        !s.ok())
      return s;
    // Scales (groups, n) 16-bit and zero points (groups, n) u8: boxes of the channel tile's 128
    // columns x the stage's group rows (block_k / group_size, at least one).
    const int64_t groups = f.group_size == 0 ? 1 : d_.k / f.group_size;
    const int sz_rows = f.group_size == 0 ? 1 : std::max(1, c.block_k / f.group_size);
    CUtensorMap map_s{}, map_z{};
    if (Status s = encode_tensor_map_2d(&map_s, CU_TENSOR_MAP_DATA_TYPE_UINT16, args.w.scales, groups, d_.n, d_.n * 2,
                                        sz_rows, kSm90MixedBlockCh, CU_TENSOR_MAP_SWIZZLE_NONE, kWho, "the weight scales");
        !s.ok())
      return s;
    if (f.zero == ZeroPoint::kInteger) {
      if (Status s = encode_tensor_map_2d(&map_z, CU_TENSOR_MAP_DATA_TYPE_UINT8, args.w.zeros, groups, d_.n, d_.n,
                                          sz_rows, kSm90MixedBlockCh, CU_TENSOR_MAP_SWIZZLE_NONE, kWho,
                                          "the weight zero points");
          !s.ok())
        return s;
    }
    Sm90MixedParams p{};
    p.pre_stages = plan_.pre_stages;
    p.sz_rows = sz_rows;
    p.scales = args.w.scales;
    p.zeros = f.zero == ZeroPoint::kInteger ? static_cast<const uint8_t*>(args.w.zeros) : nullptr;
    p.bias = d_.has_bias ? args.bias : nullptr;
    p.out = args.out;
    p.partial = reinterpret_cast<float*>(ws + act_maps_bytes_ + act_bytes_);
    p.m = static_cast<int>(d_.m);
    p.n = static_cast<int>(d_.n);
    p.k = static_cast<int>(d_.k);
    p.k_blocks = static_cast<int>(sm90_mixed_k_blocks(c, d_.k));
    p.x_last_rows = x_last_rows;
    p.group_size = f.group_size;
    p.group_shift = sm90_mixed_group_shift(f.group_size);
    p.tiles_t = static_cast<int>((d_.m + c.block_tokens - 1) / c.block_tokens);
    p.tiles_c = static_cast<int>((d_.n + kSm90MixedBlockCh - 1) / kSm90MixedBlockCh);
    p.splits = plan_.splits;
    const bool sk = plan_.sk_grid > 0;
    // Stream-K tail: the whole tiles (tiles_t = 1, one split) as units, the tail after them.
    const int64_t units = sk ? tail_.whole_tiles : int64_t(p.tiles_t) * p.tiles_c * p.splits;
    if (units > (int64_t(1) << 31) - 1) return Status::Fail(std::string(kWho) + "too many tiles (" + d_.describe() + ")");
    p.units = static_cast<int>(units);
    p.sk_tile0 = sk ? static_cast<int>(tail_.whole_tiles) : 0;
    p.sk_tiles = sk ? static_cast<int>(tail_.tail_tiles) : 0;
    p.part_col0 = p.sk_tile0 * kSm90MixedBlockCh;
    p.part_ld = p.n - p.part_col0;
    const int grid = sk ? plan_.sk_grid : static_cast<int>(std::min<int64_t>(units, sm_count_));
    // Act-order: the GEMM without PDL. Where k' != k its producers read the maps' copies, which
    // the maps kernel writes, before griddepcontrol.wait (map_of() in sm90_mixed_gemm.cuh), so with
    // PDL they could read them before they are written. Measured (session 70, call 3 of
    // bench/results/2026-11-29-h200-session70/, H200, W4 g128 f16 act-order Suite 1, a uniform
    // g_idx: k' = k, the gather with PDL, the GEMM with / without it, two rounds, us): m = 32 / 64
    // / 128 98.8 / 114.7 / 150.9 against 100.0 / 119.2 / 156.7, so it would pay once those reads
    // move after the wait where k' != k (not done: unmeasured). Session 68 had measured the GEMM's
    // PDL behind a gather without it: m = 64 116.1 / 114.1 with / without.
    const bool pdl = pdl_ && !f.act_order;
    if (f.act_order) {
      // The maps' copies with k' (read by the GEMM only where k' != k: map_of() in the kernel;
      // with k' = k, what GPTQ writes, it uses its parameter maps as for plain weights), then the
      // gather, then the GEMM.
      const CUtensorMap tmpl[kSm90MixedActOrderMaps] = {map_x, map_x_last, map_w, map_s, map_z};
      CUtensorMap* const maps = reinterpret_cast<CUtensorMap*>(ws);
      if (Status s = sm90_mixed_gemm_act_order_maps(tmpl, f.zero == ZeroPoint::kInteger ? 5 : 4,
                                                    static_cast<const int32_t*>(args.w.index), bits, maps,
                                                    gather_.pdl, st);
          !s.ok())
        return s;
      if (Status s = sm80_mixed_gemm_permute_activations(d_.a.dtype, args.a, static_cast<int>(d_.m), static_cast<int>(d_.k),
                                                         static_cast<const int32_t*>(args.w.index), ws + act_maps_bytes_,
                                                         gather_, reinterpret_cast<Stream>(st));
          !s.ok())
        return s;
      p.act_index = static_cast<const int32_t*>(args.w.index);
      p.act_maps = maps;
    }
    if (Status s = kernels_->launch(plan_.config, map_x, map_x_last, map_w, map_s, map_z, p, grid, pdl, st); !s.ok()) return s;
    if (sk)
      return sm90_mixed_gemm_reduce_sk(d_.a.dtype, p.partial, p.m, p.n, p.part_col0, p.k_blocks, tail_.iters, grid,
                                       f.group_size == 0 ? args.w.scales : nullptr, p.bias, args.out,
                                       reinterpret_cast<Stream>(st));
    if (plan_.splits > 1)
      return sm80_mixed_gemm_reduce_splits(d_.a.dtype, p.partial, p.splits, p.m, p.n,
                                           f.group_size == 0 ? args.w.scales : nullptr, p.bias, args.out,
                                           reinterpret_cast<Stream>(st));
    return Status::Ok();
  }

  static std::size_t round256(std::size_t b) { return (b + 255) / 256 * 256; }
  std::size_t partial_bytes() const {
    if (plan_.sk_grid > 0)
      return static_cast<std::size_t>(tail_.planes) * d_.m * (d_.n - tail_.whole_tiles * kSm90MixedBlockCh) * 4;
    return plan_.splits > 1 ? static_cast<std::size_t>(plan_.splits) * d_.m * d_.n * 4 : 0;
  }

  GemmDesc d_;
  int device_ = 0;
  int sm_count_ = 0;
  bool pdl_ = true;  // uses_pdl()
  Sm90MixedPlan plan_;
  Sm90MixedTail tail_;  // plan_.sk_grid > 0: the stream-K tail's split of the channel tiles
  const Sm90MixedKernels* kernels_;
  std::size_t act_maps_bytes_ = 0;  // act-order: the re-extented tensor maps
  std::size_t act_bytes_ = 0;       // act-order: the gathered activations
  ActGatherPlan gather_;            // act-order: how they are gathered (the maps kernel's PDL too)
};

}  // namespace

Status sm90_mixed_gemm_runs_on(const GpuSpec& gpu) {
  return hopper_sm90a_runs_on(gpu, kWho);
}

Status sm90_mixed_gemm_can_implement(const GemmDesc& d, const GpuSpec& gpu) {
  (void)gpu;
  if (Status s = tiled_gemm_check(d, kWho); !s.ok()) return s;
  if (d.m * d.n > (int64_t{1} << 40)) return Status::Fail(std::string(kWho) + "M x N exceeds 2^40 (" + d.describe() + ")");
  return Status::Ok();
}

std::unique_ptr<detail::GemmImpl> sm90_mixed_gemm_make(const GemmDesc& d, const GpuSpec& gpu) {
  Sm90MixedPlan plan = sm90_mixed_gemm_plan(d.m, d.n, d.k, d.w.int_format.bits, d.a.dtype == DType::kBF16, gpu.sm_count);
  // Act-order: k' (>= k) is known on the device only, so no stream-K tail (its split of the
  // iterations is the host's); the plan's splits are taken over the k' blocks.
  if (d.w.int_format.act_order && plan.sk_grid > 0) {
    plan.sk_grid = 0;
    plan.why += "; act-order: no stream-K tail";
  }
  return std::make_unique<Sm90MixedGemmImpl>(d, gpu, plan);
}

std::unique_ptr<detail::GemmImpl> sm90_mixed_gemm_make_with_plan(const GemmDesc& d, const GpuSpec& gpu,
                                                                 const Sm90MixedPlan& plan) {
  throw_if_error(sm90_mixed_gemm_can_implement(d, gpu));
  return std::make_unique<Sm90MixedGemmImpl>(d, gpu, plan);
}

}  // namespace lowbit::cuda
