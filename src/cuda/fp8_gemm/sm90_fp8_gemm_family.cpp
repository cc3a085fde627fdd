// Host side of sm90_fp8_gemm: what it accepts, the plan, the tensor maps and the launches.
// The same implementation serves sm90_int8_gemm (int8_gemm/sm90_int8_gemm_family.cpp: the
// kernel template with int8 operands; no block scaling, no stream-K).
#include "cuda/fp8_gemm/sm90_fp8_gemm_family.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cuda/common/check.hpp"
#include "cuda/common/device_guard.hpp"
#include "cuda/common/tensor_map.hpp"
#include "cuda/fp8_gemm/fp8_gemm_common.hpp"
#include "cuda/fp8_gemm/sm90_fp8_gemm_params.hpp"
#include "cuda/int8_gemm/int8_gemm_common.hpp"
#include "cuda/int8_gemm/sm90_int8_gemm_kernels.hpp"

namespace lowbit::cuda {

namespace {

constexpr const char* kWho = "lowbit: sm90_fp8_gemm: ";
constexpr const char* kInt8Who = "lowbit: sm90_int8_gemm: ";

bool aligned(const void* p, uintptr_t a) { return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0; }

// `LOWBIT_SM90_FP8_ABOX=0` keeps full activation boxes for a single row tile (a measurement
// knob; read once).
bool a_box_shrink() {
  static const bool on = [] {
    const char* env = std::getenv("LOWBIT_SM90_FP8_ABOX");
    return env == nullptr || std::string(env) != "0";
  }();
  return on;
}

// A 2-D tensor map of this family (common/tensor_map.hpp).
Status encode_2d(CUtensorMap* map, CUtensorMapDataType type, const void* base, uint64_t rows, uint64_t cols,
                 uint64_t row_bytes, uint32_t box_rows, uint32_t box_cols, CUtensorMapSwizzle swizzle,
                 const char* what, const char* who) {
  return encode_tensor_map_2d(map, type, base, rows, cols, row_bytes, box_rows, box_cols, swizzle, who, what);
}

class Sm90Fp8GemmImpl final : public detail::GemmImpl {
 public:
  Sm90Fp8GemmImpl(const GemmDesc& desc, const GpuSpec& gpu, const Sm90Fp8Plan& plan)
      : d_(desc), device_(gpu.device), plan_(plan) {
    int8_ = d_.w.kind == WeightKind::kInt8;
    who_ = int8_ ? kInt8Who : kWho;
    if (int8_ && plan_.sk_tiles != 0) throw Error(std::string(who_) + "has no stream-K (sk_tiles must be 0)");
    if (plan_.config < 0 || plan_.config >= kSm90Fp8ConfigCount)
      throw Error(std::string(who_) + "no configuration " + std::to_string(plan_.config));
    if (int8_ && !kSm90Fp8Configs[plan_.config].int8)
      throw Error(std::string(who_) + "configuration " + kSm90Fp8Configs[plan_.config].tag +
                  " is fp8-only (not instantiated for int8)");
    const int64_t k_blocks = fp8_k_blocks(d_.k);
    if (plan_.splits < 1 || plan_.splits > k_blocks)
      throw Error(std::string(who_) + "splits must be in 1.." + std::to_string(k_blocks) + ", got " +
                  std::to_string(plan_.splits));
    block_ = !int8_ && fp8_gemm_mode(d_) == Fp8GemmMode::kBlock;
    const Sm90Fp8Config& c = kSm90Fp8Configs[plan_.config];
    bm_ = c.block_m();
    if (plan_.sk_tiles != 0 && (c.waves > 1 || c.k_pair))
      throw Error(std::string(who_) + "configuration " + c.tag + " has no stream-K (sk_tiles must be 0)");
    bn_ = c.block_n;
    consumers_ = c.consumers;
    const int64_t tiles = ((d_.m + bm_ - 1) / bm_) * ((d_.n + bn_ - 1) / bn_);
    if (plan_.sk_tiles < 0 || plan_.sk_tiles > tiles || (plan_.sk_tiles > 0 && plan_.splits != 1))
      throw Error(std::string(who_) + "stream-K tiles must be in 0.." + std::to_string(tiles) +
                  " with splits == 1, got " + std::to_string(plan_.sk_tiles) + " (splits " +
                  std::to_string(plan_.splits) + ")");
    // Stream-K's finishers wait for parts of other CTAs: every CTA must be able to be resident
    // at once (one per SM).
    if (plan_.grid < 0 || plan_.grid > gpu.sm_count)
      throw Error(std::string(who_) + "grid must be in 0.." + std::to_string(gpu.sm_count) + " (the SM count), got " +
                  std::to_string(plan_.grid));
    const int64_t units = plan_.sk_tiles > 0 ? tiles - plan_.sk_tiles + int64_t(plan_.sk_tiles) * k_blocks
                                             : tiles * plan_.splits;
    grid_ = static_cast<int>(std::min<int64_t>(units, plan_.grid > 0 ? plan_.grid : gpu.sm_count));
    // Programmatic dependent launch, as for sm89_fp8_gemm (the same knob, LOWBIT_FP8_GEMM_PDL=0
    // turns it off; this family only runs with sm_90a code): not with stream-K (the launcher).
    // int8 weights: LOWBIT_INT8_GEMM_PDL, as for sm80_int8_gemm.
    const char* pdl_env = std::getenv(int8_ ? "LOWBIT_INT8_GEMM_PDL" : "LOWBIT_FP8_GEMM_PDL");
    pdl_ = pdl_env == nullptr || pdl_env[0] != '0';
    {
      DeviceGuard guard(device_);
      guard.check();
      throw_if_error(guard.finish(int8_ ? sm90_int8_gemm_prepare(plan_.config)
                                        : sm90_fp8_gemm_prepare(plan_.config, block_)));
    }
    if (!tensor_map_available()) throw Error(std::string(who_) + "the driver has no cuTensorMapEncodeTiled");
  }

  std::string name() const override {
    if (int8_) return std::string("sm90_int8_gemm_") + kSm90Fp8Configs[plan_.config].tag + "_s" + std::to_string(plan_.splits);
    return std::string(kSm90Fp8GemmName) + "_" + (block_ ? "block" : "scaled") + "_" +
           kSm90Fp8Configs[plan_.config].tag + "_s" + std::to_string(plan_.splits) +
           (plan_.sk_tiles > 0 ? "_sk" + std::to_string(plan_.sk_tiles) : std::string());
  }
  std::string weight_layout() const override { return int8_ ? kInt8NkLayout : kFp8NkLayout; }
  // Split-K: the (splits, m, n) fp32 partial sums. Stream-K: the stored-parts counters
  // (sk_tiles x consumers, padded to 256 bytes), then two tile-sized fp32 slots per CTA.
  std::size_t workspace_size() const override {
    if (plan_.sk_tiles > 0) return sk_counter_bytes() + static_cast<std::size_t>(grid_) * 2 * bm_ * bn_ * 4;
    return plan_.splits > 1 ? static_cast<std::size_t>(plan_.splits) * d_.m * d_.n * 4 : 0;
  }
  PackedWeight pack(const Fp8Tensor& w) const override { return pack_fp8_nk(w, d_, who_); }
  PackedWeight pack(const Int8Tensor& w) const override { return pack_int8_nk(w, d_, kInt8Who); }

  Status run(const GemmArgs& args, void* workspace, Stream stream) const override {
    auto misaligned = [&](const char* what, int bytes) {
      return Status::Fail(std::string(who_) + what + " must be " + std::to_string(bytes) + "-byte aligned (" +
                          d_.describe() + ")");
    };
    // TMA: global base addresses 16-byte aligned (row strides k and 4 * round_up(m, 4) are
    // multiples of 16 by the shape contract).
    if (!aligned(args.a, 16)) return misaligned("A (activations)", 16);
    if (!aligned(args.w.data, 16)) return misaligned("the packed weights", 16);
    if (!aligned(args.a_scales, block_ ? 16 : 4)) return misaligned("a_scales", block_ ? 16 : 4);
    if (!aligned(args.w.scales, 4)) return misaligned("the weight scales", 4);
    if (!aligned(args.out, 16)) return misaligned("out", 16);
    if (d_.has_bias && !aligned(args.bias, 4)) return misaligned("bias", 4);
    const bool zero_point = int8_ && d_.a.int8_zero_point;
    if (zero_point && !aligned(args.a_zeros, 4)) return misaligned("a_zeros", 4);
    if (zero_point && args.w.zeros == nullptr)
      return Status::Fail(std::string(who_) + "activations with zero points need the packed weights' row sums "
                          "(WeightView::zeros of layout int8_nk; " + d_.describe() + ")");
    if (zero_point && !aligned(args.w.zeros, 4)) return misaligned("the weight row sums", 4);
    if (plan_.splits > 1 || plan_.sk_tiles > 0) {
      if (workspace == nullptr)
        return Status::Fail(std::string(who_) + "needs workspace_size() bytes of workspace (" + d_.describe() + ")");
      if (!aligned(workspace, 16)) return misaligned("workspace", 16);
    }

    CUtensorMap map_a{}, map_w{}, map_sa{}, map_out{};
    // A: boxes of block_m rows x 128 bytes; with a single row tile (m < block_m) a box of m rows
    // rounded up to 8 instead (the TMA's zero fill of rows past the tensor cost sm90_mixed_gemm
    // 15-23% at m = 65, docs/kernels/mixed_gemm.md sm90 v20). The shared-memory rows past the
    // box keep stale bytes: an output row depends only on its own A row, rows >= m are never
    // stored, and per-row scales are read at min(row, m - 1).
    // Not with stream-K (a plan for many tiles; the kernels are not instantiated).
    const bool short_a = d_.m < bm_ && plan_.sk_tiles == 0 && a_box_shrink();
    const int a_box_rows = short_a ? static_cast<int>((d_.m + 7) / 8 * 8) : bm_;
    if (Status s = encode_2d(&map_a, CU_TENSOR_MAP_DATA_TYPE_UINT8, args.a, d_.m, d_.k, d_.k, a_box_rows, 128,
                             CU_TENSOR_MAP_SWIZZLE_128B, "A", who_);
        !s.ok())
      return s;
    if (Status s = encode_2d(&map_w, CU_TENSOR_MAP_DATA_TYPE_UINT8, args.w.data, d_.n, d_.k, d_.k, bn_, 128,
                             CU_TENSOR_MAP_SWIZZLE_128B, "W", who_);
        !s.ok())
      return s;
    // The output as 16-bit elements in boxes of 64 rows x 64, 32 or 16 columns, swizzled over
    // their 128, 64 or 32-byte rows (one per consumer warpgroup and box of columns; the
    // kernel's staging layout, sm90_fp8_out_box_cols()).
    const int box_cols = sm90_fp8_out_box_cols(bn_);
    const CUtensorMapSwizzle out_swizzle = box_cols == 64   ? CU_TENSOR_MAP_SWIZZLE_128B
                                           : box_cols == 32 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                            : CU_TENSOR_MAP_SWIZZLE_32B;
    if (Status s = encode_2d(&map_out, CU_TENSOR_MAP_DATA_TYPE_UINT16, args.out, d_.m, d_.n, d_.n * 2, 64, box_cols,
                             out_swizzle, "out", who_);
        !s.ok())
      return s;
    const int64_t k_blocks = fp8_k_blocks(d_.k);
    if (block_) {
      const int64_t m4 = (d_.m + 3) / 4 * 4;
      if (Status s = encode_2d(&map_sa, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, args.a_scales, k_blocks, m4, m4 * 4, 1, bm_,
                               CU_TENSOR_MAP_SWIZZLE_NONE, "a_scales", who_);
          !s.ok())
        return s;
    }

    Sm90Fp8Params p{};
    p.a_short_bytes = static_cast<uint32_t>(bm_ - a_box_rows) * kSm90Fp8BlockK;
    p.m = static_cast<int>(d_.m);
    p.n = static_cast<int>(d_.n);
    p.k = static_cast<int>(d_.k);
    p.k_blocks = static_cast<int>(k_blocks);
    p.tiles_m = static_cast<int>((d_.m + bm_ - 1) / bm_);
    p.tiles_n = static_cast<int>((d_.n + bn_ - 1) / bn_);
    p.splits = plan_.splits;
    const int64_t units = int64_t(p.tiles_m) * p.tiles_n * p.splits - plan_.sk_tiles;
    if (int64_t(p.tiles_m) * p.tiles_n * p.splits > (int64_t(1) << 31) - 1)
      return Status::Fail(std::string(who_) + "too many tiles (" + d_.describe() + ")");
    p.units = static_cast<int>(units);
    p.sk_tiles = plan_.sk_tiles;
    p.sk_counters = plan_.sk_tiles > 0 ? static_cast<int*>(workspace) : nullptr;
    p.sk_partial = plan_.sk_tiles > 0
                       ? reinterpret_cast<float*>(static_cast<char*>(workspace) + sk_counter_bytes())
                       : nullptr;
    p.sa = static_cast<const float*>(args.a_scales);
    p.sw = static_cast<const float*>(args.w.scales);
    p.sa_per_row = int8_ || d_.a.fp8_scaling == Fp8Scaling::kPerRow;
    p.sw_per_row = int8_ || d_.w.fp8.scaling == Fp8Scaling::kPerRow;
    p.za = zero_point ? static_cast<const int*>(args.a_zeros) : nullptr;
    p.wsum = zero_point ? static_cast<const int*>(args.w.zeros) : nullptr;
    p.bias = d_.has_bias ? args.bias : nullptr;
    p.out = args.out;
    p.out_bf16 = d_.out_dtype == DType::kBF16;
    p.partial = plan_.splits > 1 ? static_cast<float*>(workspace) : nullptr;
    const cudaStream_t st = reinterpret_cast<cudaStream_t>(stream);
    // The launches go to this object's GPU whatever the caller's current device (until session
    // 61 this family launched on the current one: on a machine of several GPUs, a call from a
    // thread whose current device was another failed or ran there).
    auto launch = [&]() -> Status {
      if (plan_.sk_tiles > 0)
        LOWBIT_CUDA_TRY(cudaMemsetAsync(workspace, 0, static_cast<std::size_t>(plan_.sk_tiles) * consumers_ * 4, st));
      if (Status s = int8_ ? sm90_int8_gemm_launch(plan_.config, map_a, map_w, map_out, p, grid_, pdl_, st)
                           : sm90_fp8_gemm_launch(plan_.config, block_, map_a, map_w, map_sa, map_out, p, grid_, pdl_, st);
          !s.ok())
        return s;
      if (plan_.splits > 1) return sm90_fp8_gemm_reduce(p, pdl_, st);
      return Status::Ok();
    };
    DeviceGuard guard(device_);
    if (!guard.ok()) return guard.status();
    return guard.finish(launch());
  }

 private:
  std::size_t sk_counter_bytes() const {
    return (static_cast<std::size_t>(plan_.sk_tiles) * consumers_ * 4 + 255) / 256 * 256;
  }

  GemmDesc d_;
  int device_ = 0;
  Sm90Fp8Plan plan_;
  bool int8_ = false;  // sm90_int8_gemm
  const char* who_ = kWho;
  bool block_ = false;
  int bm_ = 64, bn_ = 128, consumers_ = 1;
  int grid_ = 1;
  bool pdl_ = false;  // programmatic dependent launch
};

}  // namespace

Status sm90_fp8_gemm_runs_on(const GpuSpec& gpu) {
  return hopper_sm90a_runs_on(gpu, kWho);
}

Status sm90_fp8_gemm_can_implement(const GemmDesc& d, const GpuSpec& gpu) {
  (void)gpu;
  return fp8_gemm_check(d, kWho);
}

std::unique_ptr<detail::GemmImpl> sm90_fp8_gemm_make(const GemmDesc& d, const GpuSpec& gpu) {
  return std::make_unique<Sm90Fp8GemmImpl>(
      d, gpu, sm90_fp8_gemm_plan(d.m, d.n, d.k, gpu.sm_count, /*stream_k=*/true, /*int8=*/false,
                                 /*block=*/fp8_gemm_mode(d) == Fp8GemmMode::kBlock));
}

std::unique_ptr<detail::GemmImpl> sm90_fp8_gemm_make_with_plan(const GemmDesc& d, const GpuSpec& gpu,
                                                               const Sm90Fp8Plan& plan) {
  throw_if_error(fp8_gemm_check(d, kWho));
  return std::make_unique<Sm90Fp8GemmImpl>(d, gpu, plan);
}

std::unique_ptr<detail::GemmImpl> sm90_8bit_gemm_make_impl(const GemmDesc& d, const GpuSpec& gpu,
                                                           const Sm90Fp8Plan& plan) {
  return std::make_unique<Sm90Fp8GemmImpl>(d, gpu, plan);
}

}  // namespace lowbit::cuda
