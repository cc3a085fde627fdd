// Host side of the smxx_gemv family: what it accepts, its launch, packing and run()
// (docs/kernels/gemv.md).
#include "cuda/gemv/smxx_gemv_family.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "cuda/common/check.hpp"
#include "cuda/common/device_guard.hpp"
#include "cuda/common/launch_attrs.hpp"
#include "cuda/gemv/smxx_gemv_bitserial.hpp"
#include "cuda/gemv/smxx_gemv_bitserial_params.hpp"
#include "cuda/gemv/smxx_gemv_kernels.hpp"
#include "cuda/gemv/smxx_gemv_layout.hpp"
#include "lowbit/pack.hpp"
#include "lowbit/pack_gemv.hpp"

namespace lowbit::cuda {

namespace {

constexpr const char* kWho = "lowbit: smxx_gemv: ";

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

int act_kind(DType a) { return a == DType::kBF16 ? gemv::kActBf16 : a == DType::kI8 ? gemv::kActI8 : gemv::kActF16; }

int out_kind(DType o) { return o == DType::kBF16 ? gemv::kOutBf16 : o == DType::kF32 ? gemv::kOutF32 : gemv::kOutF16; }

// The packed layout this family reads for `d`: the mixed GEMMs' tiled layout whenever it
// holds the format and shape with f16 / bf16 activations (so that weights packed once serve
// the GEMV at decode m and a mixed GEMM above it: the layout never depends on m), else the
// gemv layout (1-3, 5, 6-bit, float zero points, int8 activations, shapes the tiled layout
// does not take).
bool reads_tiled(const GemmDesc& d) {
  return d.w.kind == WeightKind::kInt && (d.a.dtype == DType::kF16 || d.a.dtype == DType::kBF16) &&
         tiled_layout_supports(d.w.int_format, d.n, d.k).ok();
}

gemv::GemvShape shape_of(const GemmDesc& d, const GpuSpec& gpu);

// The launch attribute of clusters of `ksplit` blocks along x (the k split, sm_90).
cudaLaunchAttribute cluster_dim_attr(int ksplit) { return cluster_launch_attr(static_cast<unsigned>(ksplit), 1, 1); }

// The kernel row: the format, and for the tiled layout whether the launch stages the
// activations in shared memory (per item or once: choose_gemv_launch()).
int kernel_row(const GemmDesc& d, const GpuSpec& gpu) {
  const IntWeightFormat& f = d.w.int_format;
  const int layout = reads_tiled(d) ? gemv::kLayoutTiled : gemv::kLayoutGemv;
  const gemv::GemvLaunch l = gemv::choose_gemv_launch(shape_of(d, gpu), gpu);
  const bool staged = layout == gemv::kLayoutTiled && l.x_mode != gemv::kGemvXDirect;
  return gemv::find_gemv_kernel(f.bits, act_kind(d.a.dtype), gemv::scale_slots(f.group_size), layout, staged ? 1 : 0,
                                staged && l.ksplit > 1 ? 1 : 0,
                                layout == gemv::kLayoutTiled && f.act_order ? (l.act_rounds ? 2 : 1) : 0);
}

// Raises the kernel's dynamic shared-memory limit to what the device allows (once per
// device and kernel) and returns its resident blocks per SM for `warps` and `smem`.
int prepare_kernel(const void* fn, int device, int warps, std::size_t smem) {
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, int> raised;  // value: the limit set
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(device, fn);
  if (raised.find(key) == raised.end()) {
    int optin = 0;
    LOWBIT_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    LOWBIT_CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    raised[key] = optin;
  }
  int blocks = 0;
  LOWBIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, 32 * warps, smem));
  return blocks;
}

gemv::GemvShape shape_of(const GemmDesc& d, const GpuSpec& gpu) {
  gemv::GemvShape s;
  s.bits = d.w.int_format.bits;
  s.layout = reads_tiled(d) ? gemv::kLayoutTiled : gemv::kLayoutGemv;
  s.act = act_kind(d.a.dtype);
  s.slots = gemv::scale_slots(d.w.int_format.group_size);
  s.zeros = d.w.int_format.zero != ZeroPoint::kSymmetric;
  s.m = static_cast<int>(d.m);
  s.n = d.n;
  s.k = d.k;
  // Thread-block clusters (the k-split across a cluster): sm_90 code in this build.
  s.clusters = gpu.cc >= 90 && build_has_code_for(gpu.cc, 90);
  s.act_order = s.layout == gemv::kLayoutTiled && d.w.int_format.act_order;
  return s;
}

class SmxxGemvImpl final : public detail::GemmImpl {
 public:
  SmxxGemvImpl(const GemmDesc& desc, const GpuSpec& gpu)
      : desc_(desc), device_(gpu.device), row_(kernel_row(desc, gpu)), tiled_(reads_tiled(desc)),
        pdl_(smxx_gemv_uses_pdl(gpu)), bitserial_(gemv::gemv_bitserial_chosen(shape_of(desc, gpu))) {
    // Items: (16-row tile, 256-column chunk) in both layouts.
    tiles_ = (desc_.n + gemv::kTileRows - 1) / gemv::kTileRows;
    chunks_ = (desc_.k + gemv::kChunkK - 1) / gemv::kChunkK;
    if (bitserial_) {
      const gemv::GemvShape s = shape_of(desc, gpu);
      fn_ = gemv::bitserial_gemv_kernel(s.bits, s.slots);
      planes_fn_ = gemv::bitserial_xplanes_kernel(s.bits);
      if (fn_ == nullptr || planes_fn_ == nullptr)
        throw Error(std::string(kWho) + "no bit-serial kernel for " + desc.describe());
      const int warps = gemv::bitserial_warps(s, gpu);
      int blocks = 0;  // static shared memory only: no limit to raise
      {
        DeviceGuard guard(device_);
        guard.check();
        LOWBIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn_, 32 * warps, 0));
        throw_if_error(guard.finish(Status::Ok()));
      }
      if (blocks < 1) throw Error(std::string(kWho) + "bit-serial launch does not fit an SM for " + desc.describe());
      bs_launch_ = gemv::finish_bitserial_launch(s, warps, blocks, gpu);
      return;
    }
    fn_ = gemv::gemv_kernel(row_);
    if (fn_ == nullptr) throw Error(std::string(kWho) + "kernel row " + std::to_string(row_) + " not instantiated");
    launch_ = smxx_gemv_launch_for(desc, gpu);
  }

  std::string name() const override {
    const IntWeightFormat& f = desc_.w.int_format;
    if (bitserial_)
      return std::string(kSmxxGemvName) + "_bs_" + dtype_name(desc_.a.dtype) + "_w" + std::to_string(f.bits) + "_s" +
             std::to_string(gemv::scale_slots(f.group_size)) + "_w" +
             std::to_string(bs_launch_.warps) + "g" + std::to_string(bs_launch_.grid);
    return std::string(kSmxxGemvName) + "_" + dtype_name(desc_.a.dtype) + "_w" + std::to_string(f.bits) + "_s" +
           std::to_string(gemv::scale_slots(f.group_size)) + "_w" + std::to_string(launch_.warps) + "d" +
           std::to_string(launch_.depth) + "g" + std::to_string(launch_.grid) + (launch_.corr_table ? "" : "_ci") +
           (tiled_ ? "_tiled" : "") + (launch_.ksplit > 1 ? "_k" + std::to_string(launch_.ksplit) : "") +
           (desc_.w.int_format.act_order ? (launch_.act_rounds ? "_actr" : "_act") : "");
  }
  std::string weight_layout() const override {
    return tiled_ ? tiled_layout_name(desc_.w.int_format.bits) : gemv_layout_name(desc_.w.int_format.bits);
  }
  std::size_t workspace_size() const override {
    return bitserial_ ? gemv::bitserial_workspace(desc_.w.int_format.bits, chunks_).bytes : 0;
  }
  PackedWeight pack(const IntWeight& w) const override { return tiled_ ? pack_tiled(w) : pack_gemv(w); }

  Status run(const GemmArgs& args, void* workspace, Stream stream) const override {
    (void)workspace;
    const IntWeightFormat& f = desc_.w.int_format;
    auto misaligned = [&](const char* what) {
      return Status::Fail(std::string(kWho) + what + " must be 16-byte aligned (" + desc_.describe() + ")");
    };
    if (!aligned16(args.a)) return misaligned("A (activations)");
    if (!aligned16(args.w.data)) return misaligned("weight data");
    if (!aligned16(args.w.scales)) return misaligned("weight scales");
    if (f.zero != ZeroPoint::kSymmetric && !aligned16(args.w.zeros)) return misaligned("weight zero points");
    if (f.act_order) {
      if (args.w.index == nullptr)
        return Status::Fail(std::string(kWho) + "act-order weights need the index buffer (WeightView::index) (" +
                            desc_.describe() + ")");
      if (!aligned16(args.w.index)) return misaligned("weight index (act-order)");
    }
    if (bitserial_) return run_bitserial(args, workspace, stream);

    gemv::GemvParams p;
    p.x = args.a;
    p.x_scales = desc_.a.dtype == DType::kI8 ? static_cast<const float*>(args.a_scales) : nullptr;
    p.w = args.w.data;
    p.scales = static_cast<const uint32_t*>(args.w.scales);
    p.zeros = f.zero != ZeroPoint::kSymmetric ? static_cast<const uint32_t*>(args.w.zeros) : nullptr;
    p.bias = desc_.has_bias ? args.bias : nullptr;
    p.y = args.out;
    p.m = static_cast<int>(desc_.m);
    p.n = static_cast<int>(desc_.n);
    p.k = static_cast<int>(desc_.k);
    p.tiles = static_cast<int>(tiles_);
    p.chunks = static_cast<int>(chunks_);
    p.warps = launch_.warps;
    p.slot_bytes = launch_.slot_bytes;
    p.scale_bf16 = f.scale_dtype == DType::kBF16 ? 1 : 0;
    p.out_dtype = out_kind(desc_.out_dtype);
    p.has_zeros = f.zero != ZeroPoint::kSymmetric ? 1 : 0;
    p.has_bias = desc_.has_bias ? 1 : 0;
    p.corr_table = launch_.corr_table ? 1 : 0;
    p.corr_offset = launch_.corr_offset;
    p.corr_stride = launch_.corr_stride;
    p.part_offset = launch_.part_offset;
    p.phase_tiles = launch_.phase_tiles;
    p.xbuf_stride = launch_.xbuf_stride;
    p.x_once = launch_.x_mode == gemv::kGemvXOnce ? 1 : 0;
    p.xbuf_offset = launch_.xbuf_offset;
    p.act_index = f.act_order ? static_cast<const int32_t*>(args.w.index) : nullptr;
    p.place_offset = launch_.place_offset;
    p.act_gather = launch_.act_gather;
    p.ksplit = launch_.ksplit;
    p.tile_interleave = launch_.tile_interleave ? 1 : 0;
    p.scale_prefetch = launch_.scale_prefetch ? 1 : 0;
    gemv::gemv_work_split(p, launch_.grid);

    DeviceGuard guard(device_);
    if (!guard.ok()) return guard.status();
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned>(launch_.grid));
    cfg.blockDim = dim3(static_cast<unsigned>(32 * launch_.warps));
    cfg.dynamicSmemBytes = launch_.smem_bytes;
    cfg.stream = stream;
    cudaLaunchAttribute attr[2];
    unsigned nattr = 0;
    if (pdl_) {
      attr[nattr++] = pdl_launch_attr();
    }
    if (launch_.ksplit > 1) attr[nattr++] = cluster_dim_attr(launch_.ksplit);
    cfg.attrs = nattr > 0 ? attr : nullptr;
    cfg.numAttrs = nattr;
    void* kargs[] = {&p};
    LOWBIT_CUDA_TRY(cudaLaunchKernelExC(&cfg, fn_, kargs));
    return guard.finish(Status::Ok());
  }

 private:
  // The bit-serial kernel (1- and 2-bit weights): the activation-plane kernel, then the GEMV,
  // both launched with PDL when the GPU has it (smxx_gemv_bitserial.cuh: the contract).
  Status run_bitserial(const GemmArgs& args, void* workspace, Stream stream) const {
    const IntWeightFormat& f = desc_.w.int_format;
    if (workspace == nullptr)
      return Status::Fail(std::string(kWho) + "needs workspace_size() bytes of workspace (" + desc_.describe() + ")");
    if (!aligned16(workspace))
      return Status::Fail(std::string(kWho) + "workspace must be 16-byte aligned (" + desc_.describe() + ")");
    const gemv::BitserialWorkspace ws = gemv::bitserial_workspace(f.bits, chunks_);
    char* base = static_cast<char*>(workspace);
    gemv::BitserialParams p;
    p.x = args.a;
    p.w = args.w.data;
    p.scales = static_cast<const uint32_t*>(args.w.scales);
    p.zeros = f.zero != ZeroPoint::kSymmetric ? static_cast<const uint32_t*>(args.w.zeros) : nullptr;
    p.bias = desc_.has_bias ? args.bias : nullptr;
    p.y = args.out;
    p.planes = reinterpret_cast<uint32_t*>(base + ws.planes_offset);
    p.xsum = reinterpret_cast<int32_t*>(base + ws.xsum_offset);
    p.xscale = reinterpret_cast<float*>(base + ws.xscale_offset);
    p.n = static_cast<int>(desc_.n);
    p.k = static_cast<int>(desc_.k);
    p.tiles = static_cast<int>(tiles_);
    p.chunks = static_cast<int>(chunks_);
    p.seg_cols = f.group_size == 0 ? gemv::kXBlock : f.group_size;
    p.warps = bs_launch_.warps;
    p.tile_interleave = bs_launch_.tile_interleave ? 1 : 0;
    p.x_bf16 = desc_.a.dtype == DType::kBF16 ? 1 : 0;
    p.scale_bf16 = f.scale_dtype == DType::kBF16 ? 1 : 0;
    p.out_dtype = out_kind(desc_.out_dtype);
    p.has_zeros = f.zero != ZeroPoint::kSymmetric ? 1 : 0;
    p.has_bias = desc_.has_bias ? 1 : 0;

    DeviceGuard guard(device_);
    if (!guard.ok()) return guard.status();
    cudaLaunchAttribute attr[1] = {pdl_launch_attr()};
    void* kargs[] = {&p};
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned>(chunks_ * 4 * f.bits));
    cfg.blockDim = dim3(128);
    cfg.stream = stream;
    if (pdl_) {
      cfg.attrs = attr;
      cfg.numAttrs = 1;
    }
    cudaError_t e = cudaLaunchKernelExC(&cfg, planes_fn_, kargs);
    if (e == cudaSuccess) {
      cfg.gridDim = dim3(static_cast<unsigned>(bs_launch_.grid));
      cfg.blockDim = dim3(static_cast<unsigned>(32 * bs_launch_.warps));
      e = cudaLaunchKernelExC(&cfg, fn_, kargs);
    }
    LOWBIT_CUDA_TRY(e);
    return guard.finish(Status::Ok());
  }

  GemmDesc desc_;
  int device_;
  int row_;
  bool tiled_;
  bool pdl_;
  bool bitserial_;
  const void* planes_fn_ = nullptr;
  gemv::BitserialLaunch bs_launch_;
  const void* fn_ = nullptr;
  gemv::GemvLaunch launch_;
  int64_t tiles_ = 0;
  int64_t chunks_ = 0;
};

}  // namespace

bool smxx_gemv_uses_pdl(const GpuSpec& gpu) {
  const char* env = std::getenv("LOWBIT_GEMV_PDL");
  if (env != nullptr && env[0] == '0') return false;
  return gpu.cc >= 90 && build_has_code_for(gpu.cc, 90);
}

Status smxx_gemv_runs_on(const GpuSpec& gpu) {
  if (gpu.cc < 80)
    return Status::Fail(std::string(kWho) + "needs compute capability 8.0 or newer (mma.sync bf16 / int8); " +
                        gpu.name + " is sm_" + std::to_string(gpu.cc));
  if (!build_has_code_for(gpu.cc, 80))
    return Status::Fail(std::string(kWho) + "this build has no sm_80+ code that runs on sm_" + std::to_string(gpu.cc) +
                        " (LOWBIT_CUDA_ARCHITECTURES)");
  return Status::Ok();
}

Status smxx_gemv_can_implement(const GemmDesc& d, const GpuSpec& gpu) {
  auto fail = [&](const std::string& why) { return Status::Fail(std::string(kWho) + why + " (" + d.describe() + ")"); };
  if (d.w.kind != WeightKind::kInt) return fail("takes integer weights, not " + d.w.name());
  const IntWeightFormat& f = d.w.int_format;
  if (d.m < 1 || d.m > 8) return fail("M=" + std::to_string(d.m) + " is not in 1..8 (the GEMV's batch)");
  if (d.a.dtype != DType::kF16 && d.a.dtype != DType::kBF16 && d.a.dtype != DType::kI8)
    return fail(std::string("activations must be f16, bf16 or int8, not ") + dtype_name(d.a.dtype));
  if (d.a.dtype == DType::kI8) {
    if (f.bits != 4 && f.bits != 8) return fail("int8 activations take 4- or 8-bit weights, not " + f.name());
    if (d.a.int8_zero_point) return fail("int8 activations must be symmetric (no per-token zero point)");
    if (f.zero == ZeroPoint::kFloat) return fail("int8 activations do not combine with float zero points");
  }
  if (d.out_dtype != DType::kF16 && d.out_dtype != DType::kBF16 && d.out_dtype != DType::kF32)
    return fail(std::string("output dtype must be f16, bf16 or f32, not ") + dtype_name(d.out_dtype));
  if (reads_tiled(d)) {
    // Act-order: the staging gathers x[:, perm] (smxx_gemv.cuh), so the launch must hold each
    // warp's activations (and its chunks' permutation) once per call.
    if (f.act_order && gemv::choose_gemv_launch(shape_of(d, gpu), gpu).x_mode != gemv::kGemvXOnce)
      return fail("act-order weights need the activations staged once per call, and m x k (with the "
                  "column permutation) does not fit this GPU's shared memory (a mixed GEMM takes them)");
  } else if (Status s = gemv_layout_supports(f, d.n, d.k); !s.ok()) {
    return s;
  }
  if (d.n >= (int64_t{1} << 28) || d.k >= (int64_t{1} << 27))
    return fail("shape exceeds the kernel's 32-bit indexing (n < 2^28, k < 2^27)");
  if (kernel_row(d, gpu) < 0) return fail("no kernel instantiated for " + f.name() + " with " + dtype_name(d.a.dtype));
  {
    const gemv::GemvLaunch l = gemv::choose_gemv_launch(shape_of(d, gpu), gpu);
    if (l.smem_bytes > static_cast<std::size_t>(gpu.smem_per_block_optin))
      return fail("needs " + std::to_string(l.smem_bytes) + " bytes of shared memory per block, more than the " +
                  std::to_string(gpu.smem_per_block_optin) + " this GPU allows");
  }
  return Status::Ok();
}

gemv::GemvLaunch smxx_gemv_launch_for(const GemmDesc& d, const GpuSpec& gpu) {
  gemv::GemvLaunch l = gemv::choose_gemv_launch(shape_of(d, gpu), gpu);
  const void* fn = gemv::gemv_kernel(kernel_row(d, gpu));
  if (fn == nullptr) throw Error(std::string(kWho) + "no kernel for " + d.describe());
  DeviceGuard guard(gpu.device);
  guard.check();
  int blocks = prepare_kernel(fn, gpu.device, l.warps, l.smem_bytes);
  // The launch's blocks per SM are a ceiling, not only the grid's size: a kernel whose registers
  // would let more of its blocks share an SM gets them anyway from the block scheduler (with
  // PDL, onto the SMs the previous call left first), and the blocks own fixed shares of the
  // tiles, so an SM with one block more ends last. Session 32 (docs/kernels/gemv.md v24): int8
  // activations, W4 g128, gate_up at m = 1, 8 warps x 2 blocks: at 72 registers (three blocks
  // fit) 21.7 us against 17.0 at 90 (two fit). So the dynamic shared memory is padded until
  // no more than blocks_per_sm blocks fit. In this build that touches only the int8-activation
  // 4-bit kernels (per-channel, g64, g128: 72-82 registers) in their 8-warp launches; the cost:
  // while they run, a following kernel's blocks (PDL) find that much less shared memory free.
  if (blocks > l.blocks_per_sm && l.ksplit <= 1) {
    const std::size_t optin = static_cast<std::size_t>(gpu.smem_per_block_optin);
    std::size_t padded = std::max(l.smem_bytes, static_cast<std::size_t>(gpu.smem_per_sm) / (l.blocks_per_sm + 1));
    padded = (padded + 127) / 128 * 128;
    while (padded <= optin && (blocks = prepare_kernel(fn, gpu.device, l.warps, padded)) > l.blocks_per_sm) padded += 1024;
    if (padded > optin)
      throw Error(std::string(kWho) + "cannot hold the launch to " + std::to_string(l.blocks_per_sm) +
                  " blocks per SM for " + d.describe());
    l.smem_bytes = padded;
  }
  l.resident_blocks = blocks;
  // Clusters (the k-split across blocks): how many the runtime keeps resident at once.
  int clusters = 0;
  cudaError_t e = cudaSuccess;
  if (blocks >= 1 && l.ksplit > 1) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned>(l.ksplit * gpu.sm_count));
    cfg.blockDim = dim3(static_cast<unsigned>(32 * l.warps));
    cfg.dynamicSmemBytes = l.smem_bytes;
    cudaLaunchAttribute attr[1] = {cluster_dim_attr(l.ksplit)};
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    e = cudaOccupancyMaxActiveClusters(&clusters, fn, &cfg);
  }
  LOWBIT_CUDA_CHECK(e);
  throw_if_error(guard.finish(Status::Ok()));
  if (blocks < 1 || (l.ksplit > 1 && clusters < 1))
    throw Error(std::string(kWho) + "launch does not fit an SM (" + std::to_string(l.warps) + " warps, " +
                std::to_string(l.smem_bytes) + " bytes of shared memory" +
                (l.ksplit > 1 ? ", clusters of " + std::to_string(l.ksplit) : std::string()) + ") for " +
                d.describe());
  gemv::finish_gemv_launch(l, (d.n + gemv::kTileRows - 1) / gemv::kTileRows, blocks, gpu, clusters);
  return l;
}

std::unique_ptr<detail::GemmImpl> smxx_gemv_make(const GemmDesc& desc, const GpuSpec& gpu) {
  return std::make_unique<SmxxGemvImpl>(desc, gpu);
}

}  // namespace lowbit::cuda
