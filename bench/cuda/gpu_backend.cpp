// lowbit bench: the CUDA timing backend (method: bench/gpu_backend.hpp, bench/README.md).
//
// Host code only (the fill kernel is in fill.cu). Every CUDA runtime and cuBLAS call is
// checked with the library's LOWBIT_CUDA_CHECK / LOWBIT_CUBLAS_CHECK, which throw
// lowbit::Error naming the call, file and line; nothing prints between the first and the last
// timing event.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "bench/cuda/fill.hpp"
#include "bench/gpu_backend.hpp"
#include "bench/operands.hpp"
#include "cuda/common/check.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/quantize.hpp"

namespace lowbit::bench {

namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;
// cuBLAS's recommended workspace on Hopper is 32 MiB; set explicitly so that graph capture
// never makes cuBLAS allocate.
constexpr size_t kCublasWorkspaceBytes = 32 * kMiB;
// Operands rotate through copies until one rotation touches more than this many L2 sizes.
constexpr double kL2Multiple = 3.0;
constexpr int kMinCopies = 2;
constexpr int kMaxCopies = 1024;
// A graph of more launches takes long to capture and instantiate without changing the figure.
constexpr int kMaxCalls = 4096;

// A cudaMalloc'ed buffer, freed on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes > 0) LOWBIT_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  uint8_t* bytes_ptr() const { return static_cast<uint8_t*>(ptr_); }
  size_t size() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// `count` CUDA events, destroyed on scope exit.
class Events {
 public:
  explicit Events(size_t count) : events_(count, nullptr) {
    for (auto& e : events_) LOWBIT_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~Events() {
    for (auto e : events_)
      if (e != nullptr) (void)cudaEventDestroy(e);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t operator[](size_t i) const { return events_[i]; }
  // Microseconds between events i and i + 1, for every i.
  std::vector<double> intervals_us() const {
    std::vector<double> us;
    for (size_t i = 0; i + 1 < events_.size(); ++i) {
      float ms = 0;
      LOWBIT_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
      us.push_back(1000.0 * ms);
    }
    return us;
  }

 private:
  std::vector<cudaEvent_t> events_;
};

// A captured graph and its executable instance.
struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  int calls = 0;
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() { reset(); }
  void reset() {
    if (exec != nullptr) (void)cudaGraphExecDestroy(exec);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// One set of operands; the case rotates through several so that no call finds its inputs
// in the L2 that the previous calls filled.
struct OperandSet {
  DeviceBuffer a;         // (m, k) of desc.a.dtype, row-major
  DeviceBuffer a_scales;  // fp32, act_scale_count(desc.a, m, k)
  DeviceBuffer w_data;    // packed weights (or dense (n, k) for cublasGemmEx)
  DeviceBuffer w_scales;
  DeviceBuffer w_zeros;
  DeviceBuffer w_index;
  DeviceBuffer out;       // (m, n) of desc.out_dtype, row-major
};

const void* or_null(const DeviceBuffer& b) { return b.size() > 0 ? b.get() : nullptr; }

// The activation value range of each dtype: quantized data spans the code range, its scales
// bring values back to about [-1, 1] (as the host side does, bench/operands.cpp).
struct ActFill {
  float lo, hi, scale_base;
};
ActFill act_fill(DType t) {
  switch (t) {
    case DType::kE4M3: return {-kE4M3Max, kE4M3Max, 1.0f / kE4M3Max};
    case DType::kE5M2: return {-kE5M2Max, kE5M2Max, 1.0f / kE5M2Max};
    case DType::kI8: return {-127.49f, 127.49f, 1.0f / 127.0f};
    default: return {-1.0f, 1.0f, 0.0f};
  }
}

class CudaBackend final : public GpuBackend {
 public:
  explicit CudaBackend(int device) : device_(device) {
    LOWBIT_CUDA_CHECK(cudaSetDevice(device_));
    cudaDeviceProp p{};
    LOWBIT_CUDA_CHECK(cudaGetDeviceProperties(&p, device_));
    props_.device = device_;
    props_.name = p.name;
    props_.cc_major = p.major;
    props_.cc_minor = p.minor;
    props_.sm_count = p.multiProcessorCount;
    props_.memory_bytes = p.totalGlobalMem;
    props_.l2_bytes = static_cast<uint64_t>(p.l2CacheSize);
    int driver = 0, runtime = 0;
    LOWBIT_CUDA_CHECK(cudaDriverGetVersion(&driver));
    LOWBIT_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    props_.driver_version = version_text(driver);
    props_.runtime_version = version_text(runtime);
    LOWBIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    // A dedicated handle for this stream. cublasSetStream resets the workspace to cuBLAS's
    // pool, so the explicit workspace is set after it.
    LOWBIT_CUBLAS_CHECK(cublasCreate(&cublas_));
    LOWBIT_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    cublas_workspace_ = DeviceBuffer(kCublasWorkspaceBytes);
    LOWBIT_CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_.get(), kCublasWorkspaceBytes));
  }

  ~CudaBackend() override {
    if (cublas_ != nullptr) (void)cublasDestroy(cublas_);
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }

  const GpuProps& props() const override { return props_; }

  bool healthy() override {
    const cudaError_t e = cudaDeviceSynchronize();
    (void)cudaGetLastError();
    return e == cudaSuccess;
  }

  CopyBandwidth copy_bandwidth(int reps) override {
    LOWBIT_CUDA_CHECK(cudaSetDevice(device_));
    size_t free_bytes = 0, total_bytes = 0;
    LOWBIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    uint64_t bytes = kGiB;
    while (bytes > 64 * kMiB && 2 * bytes + 256 * kMiB > free_bytes) bytes /= 2;
    DeviceBuffer src(bytes), dst(bytes);
    LOWBIT_CUDA_CHECK(cuda::fill_random(src.get(), DType::kF32, int64_t(bytes / 4), 0x5EED,
                                        -1.0f, 1.0f, stream_));
    LOWBIT_CUDA_CHECK(cudaMemsetAsync(dst.get(), 0, bytes, stream_));
    LOWBIT_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice,
                                      stream_));  // warm-up
    Events ev(static_cast<size_t>(reps) + 1);
    LOWBIT_CUDA_CHECK(cudaEventRecord(ev[0], stream_));
    for (int r = 0; r < reps; ++r) {
      LOWBIT_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice,
                                        stream_));
      LOWBIT_CUDA_CHECK(cudaEventRecord(ev[r + 1], stream_));
    }
    LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    CopyBandwidth bw;
    bw.bytes = bytes;
    bw.us = ev.intervals_us();
    bw.gbps = 2.0 * double(bytes) / (median(bw.us) * 1e-6) / 1e9;
    return bw;
  }

  GpuCaseResult run_case(const GpuCase& c) override {
    LOWBIT_CUDA_CHECK(cudaSetDevice(device_));
    const GemmDesc& d = c.desc;
    const bool use_cublas = c.gemm == nullptr;
    if (use_cublas) {
      const DType t = d.a.dtype;
      if (d.w.kind != WeightKind::kDense || (t != DType::kF16 && t != DType::kBF16) ||
          d.w.dense_dtype != t || d.out_dtype != t)
        throw Error("lowbit: bench: cublasGemmEx runs dense f16 or bf16 only (" + d.describe() +
                    ")");
    } else if (c.weight == nullptr) {
      throw Error("lowbit: bench: no packed weights for " + d.describe());
    }

    // Bytes of one operand set, from the buffer sizes.
    GpuCaseResult r;
    const size_t a_bytes = size_t(d.m * d.k) * dtype_size(d.a.dtype);
    const int64_t a_scale_count = act_scale_count(d.a, d.m, d.k);
    const size_t a_scale_bytes = size_t(a_scale_count) * sizeof(float);
    const size_t out_bytes = size_t(d.m * d.n) * dtype_size(d.out_dtype);
    size_t w_bytes[4] = {0, 0, 0, 0};  // data, scales, zeros, index
    if (use_cublas) {
      w_bytes[0] = size_t(d.n * d.k) * dtype_size(d.a.dtype);
    } else {
      w_bytes[0] = c.weight->data.size();
      w_bytes[1] = c.weight->scales.size();
      w_bytes[2] = c.weight->zeros.size();
      w_bytes[3] = c.weight->index.size();
    }
    r.bytes_a = a_bytes + a_scale_bytes;
    r.bytes_w = w_bytes[0] + w_bytes[1] + w_bytes[2] + w_bytes[3];
    r.bytes_out = out_bytes;
    const uint64_t set_bytes = r.bytes_a + r.bytes_w + r.bytes_out;

    // Copies: one rotation > 3x L2, within the free memory.
    const size_t workspace_bytes = use_cublas ? 0 : c.gemm->workspace_size();
    size_t free_bytes = 0, total_bytes = 0;
    LOWBIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double budget = 0.9 * double(free_bytes) - double(workspace_bytes) - double(256 * kMiB);
    int copies = static_cast<int>(std::ceil(kL2Multiple * double(props_.l2_bytes) / double(set_bytes)));
    copies = std::clamp(copies, kMinCopies, kMaxCopies);
    const int fit = budget > 0 ? static_cast<int>(budget / double(set_bytes)) : 0;
    if (fit < 1)
      throw Error("lowbit: bench: one operand set needs " + std::to_string(set_bytes / kMiB) +
                  " MiB, more than the free device memory allows (" + d.describe() + ")");
    copies = std::min(copies, fit);
    r.copies = copies;

    // Operands: activations (and dense weights) filled on the device, packed weights uploaded
    // once and copied device to device, outputs poisoned with 0xFF bytes (NaN in f16, bf16
    // and f32) so that an unwritten element fails the check.
    std::vector<OperandSet> sets(static_cast<size_t>(copies));
    const ActFill af = act_fill(d.a.dtype);
    for (int i = 0; i < copies; ++i) {
      OperandSet& s = sets[size_t(i)];
      const uint64_t seed_i = hash64(c.seed, uint64_t(i));
      s.a = DeviceBuffer(a_bytes);
      LOWBIT_CUDA_CHECK(cuda::fill_random(s.a.get(), d.a.dtype, d.m * d.k, seed_i, af.lo, af.hi,
                                          stream_));
      s.a_scales = DeviceBuffer(a_scale_bytes);
      LOWBIT_CUDA_CHECK(cuda::fill_random(s.a_scales.get(), DType::kF32, a_scale_count, seed_i + 1,
                                          0.5f * af.scale_base, 1.5f * af.scale_base, stream_));
      s.w_data = DeviceBuffer(w_bytes[0]);
      s.w_scales = DeviceBuffer(w_bytes[1]);
      s.w_zeros = DeviceBuffer(w_bytes[2]);
      s.w_index = DeviceBuffer(w_bytes[3]);
      if (use_cublas) {
        LOWBIT_CUDA_CHECK(cuda::fill_random(s.w_data.get(), d.a.dtype, d.n * d.k,
                                            hash64(c.weight_seed, uint64_t(i)), -1.0f, 1.0f,
                                            stream_));
      } else {
        const std::vector<uint8_t>* host[4] = {&c.weight->data, &c.weight->scales,
                                               &c.weight->zeros, &c.weight->index};
        DeviceBuffer* dev[4] = {&s.w_data, &s.w_scales, &s.w_zeros, &s.w_index};
        const OperandSet& first = sets[0];
        const DeviceBuffer* first_dev[4] = {&first.w_data, &first.w_scales, &first.w_zeros,
                                            &first.w_index};
        for (int b = 0; b < 4; ++b) {
          if (w_bytes[b] == 0) continue;
          if (i == 0)
            LOWBIT_CUDA_CHECK(cudaMemcpyAsync(dev[b]->get(), host[b]->data(), w_bytes[b],
                                              cudaMemcpyHostToDevice, stream_));
          else
            LOWBIT_CUDA_CHECK(cudaMemcpyAsync(dev[b]->get(), first_dev[b]->get(), w_bytes[b],
                                              cudaMemcpyDeviceToDevice, stream_));
        }
      }
      s.out = DeviceBuffer(out_bytes);
      LOWBIT_CUDA_CHECK(cudaMemsetAsync(s.out.get(), 0xFF, out_bytes, stream_));
    }
    DeviceBuffer workspace(workspace_bytes);
    LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream_));

    // One call on operand set i.
    auto enqueue = [&](int i) {
      const OperandSet& s = sets[size_t(i)];
      if (use_cublas) {
        // Row-major out(m, n) = A(m, k) * W(n, k)^T is, column-major, out^T (n, m) =
        // W^T * A^T: op(W) = T with lda = k, op(A) = N with ldb = k, ldc = n (the TN call).
        const cudaDataType_t t = d.a.dtype == DType::kF16 ? CUDA_R_16F : CUDA_R_16BF;
        const float alpha = 1.0f, beta = 0.0f;
        LOWBIT_CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, int(d.n), int(d.m),
                                         int(d.k), &alpha, s.w_data.get(), t, int(d.k), s.a.get(),
                                         t, int(d.k), &beta, s.out.get(), t, int(d.n),
                                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return;
      }
      GemmArgs args;
      args.a = s.a.get();
      args.a_scales = or_null(s.a_scales);
      args.w = WeightView{or_null(s.w_data), or_null(s.w_scales), or_null(s.w_zeros),
                          or_null(s.w_index)};
      args.out = s.out.get();
      const Status st = c.gemm->run(args, workspace.get(), stream_);
      if (!st.ok()) throw Error(st.message());
    };

    // Captures `calls` launches cycling through the sets (global capture mode: a run() that
    // calls something capture-unsafe, like cudaMalloc, fails here with a CUDA error).
    auto capture = [&](Graph& g, int calls) {
      g.reset();
      LOWBIT_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal));
      try {
        for (int i = 0; i < calls; ++i) enqueue(i % copies);
      } catch (...) {
        cudaGraph_t partial = nullptr;
        (void)cudaStreamEndCapture(stream_, &partial);
        if (partial != nullptr) (void)cudaGraphDestroy(partial);
        (void)cudaGetLastError();
        throw;
      }
      LOWBIT_CUDA_CHECK(cudaStreamEndCapture(stream_, &g.graph));
      LOWBIT_CUDA_CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));
      g.calls = calls;
    };

    // Warm-up outside any graph: module loading, cuBLAS heuristics, first-touch costs. Copy 0's
    // output is poisoned again afterwards, so the check sees what the graph replays wrote.
    enqueue(0);
    LOWBIT_CUDA_CHECK(cudaMemsetAsync(sets[0].out.get(), 0xFF, out_bytes, stream_));
    LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream_));

    // Pilot: one rotation, replayed once to warm up and once timed, sizes the real graph.
    Graph graph;
    capture(graph, copies);
    int calls = copies;
    if (c.target_replay_ms > 0) {
      Events pilot(2);
      LOWBIT_CUDA_CHECK(cudaGraphLaunch(graph.exec, stream_));
      LOWBIT_CUDA_CHECK(cudaEventRecord(pilot[0], stream_));
      LOWBIT_CUDA_CHECK(cudaGraphLaunch(graph.exec, stream_));
      LOWBIT_CUDA_CHECK(cudaEventRecord(pilot[1], stream_));
      LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      const double rotation_ms = std::max(pilot.intervals_us()[0] / 1000.0, 1e-6);
      const int rotations = static_cast<int>(std::ceil(c.target_replay_ms / rotation_ms));
      calls = copies * std::max(1, std::min(rotations, kMaxCalls / copies));
      if (calls != graph.calls) capture(graph, calls);
    }
    r.calls = calls;

    // One warm-up replay, then `reps` replays back to back between events.
    const int reps = std::max(1, c.reps);
    Events ev(static_cast<size_t>(reps) + 1);
    LOWBIT_CUDA_CHECK(cudaGraphLaunch(graph.exec, stream_));
    LOWBIT_CUDA_CHECK(cudaEventRecord(ev[0], stream_));
    for (int rep = 0; rep < reps; ++rep) {
      LOWBIT_CUDA_CHECK(cudaGraphLaunch(graph.exec, stream_));
      LOWBIT_CUDA_CHECK(cudaEventRecord(ev[size_t(rep) + 1], stream_));
    }
    LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    r.replay_us = ev.intervals_us();
    r.us_per_call = median(r.replay_us) / calls;

    // Bring back what the check needs, from operand set 0 (every replay rewrote its output).
    const OperandSet& s0 = sets[0];
    const size_t a_row_bytes = size_t(d.k) * dtype_size(d.a.dtype);
    const size_t out_row_bytes = size_t(d.n) * dtype_size(d.out_dtype);
    r.a_rows.resize(c.sample_rows.size() * a_row_bytes);
    std::vector<uint8_t> out_raw(c.sample_rows.size() * out_row_bytes);
    for (size_t i = 0; i < c.sample_rows.size(); ++i) {
      const int64_t row = c.sample_rows[i];
      if (row < 0 || row >= d.m) throw Error("lowbit: bench: sample row out of range");
      LOWBIT_CUDA_CHECK(cudaMemcpyAsync(r.a_rows.data() + i * a_row_bytes,
                                        s0.a.bytes_ptr() + size_t(row) * a_row_bytes, a_row_bytes,
                                        cudaMemcpyDeviceToHost, stream_));
      LOWBIT_CUDA_CHECK(cudaMemcpyAsync(out_raw.data() + i * out_row_bytes,
                                        s0.out.bytes_ptr() + size_t(row) * out_row_bytes,
                                        out_row_bytes, cudaMemcpyDeviceToHost, stream_));
    }
    r.a_scales.resize(size_t(a_scale_count));
    if (a_scale_bytes > 0)
      LOWBIT_CUDA_CHECK(cudaMemcpyAsync(r.a_scales.data(), s0.a_scales.get(), a_scale_bytes,
                                        cudaMemcpyDeviceToHost, stream_));
    std::vector<uint8_t> w_raw;
    if (c.want_dense_weight && use_cublas) {
      w_raw.resize(w_bytes[0]);
      LOWBIT_CUDA_CHECK(cudaMemcpyAsync(w_raw.data(), s0.w_data.get(), w_bytes[0],
                                        cudaMemcpyDeviceToHost, stream_));
    }
    LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    r.out_rows = to_f32(out_raw.data(), d.out_dtype, int64_t(c.sample_rows.size()) * d.n);
    if (!w_raw.empty()) r.dense_w = to_f32(w_raw.data(), d.a.dtype, d.n * d.k);
    r.rotation_bytes = uint64_t(copies) * set_bytes;
    return r;
  }

 private:
  int device_ = 0;
  GpuProps props_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  DeviceBuffer cublas_workspace_;
};

}  // namespace

std::unique_ptr<GpuBackend> open_gpu_backend(int device, std::string* why_not) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    *why_not = std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")";
    (void)cudaGetLastError();
    return nullptr;
  }
  if (count == 0) {
    *why_not = "no CUDA-capable device is detected";
    return nullptr;
  }
  if (device < 0 || device >= count)
    throw Error("lowbit: --device " + std::to_string(device) + " does not exist (" +
                std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") + ")");
  return std::make_unique<CudaBackend>(device);
}

}  // namespace lowbit::bench
