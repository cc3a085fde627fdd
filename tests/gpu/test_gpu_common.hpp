// Helpers shared by the GPU tests: skipping without a GPU, device buffers, random data,
// conversions through the host codecs.
//
// Every GPU test starts with LOWBIT_REQUIRE_GPU(): on a machine without a usable CUDA device
// the test is SKIPPED with the runtime's reason ("no CUDA device: cudaErrorNoDevice (...)"),
// never failed.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/common/check.hpp"
#include "lowbit/device.hpp"
#include "lowbit/dtype.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/status.hpp"

#define LOWBIT_REQUIRE_GPU()                                                    \
  do {                                                                          \
    if (::lowbit::list_gpus().empty()) GTEST_SKIP() << ::lowbit::cuda_status(); \
  } while (0)

namespace lowbit::test {

// LOWBIT_TEST_SMALL=1: the tests shrink their sweeps and skip their large cases (for
// compute-sanitizer runs).
inline bool small_mode() {
  const char* e = std::getenv("LOWBIT_TEST_SMALL");
  return e != nullptr && e[0] == '1';
}

// Owns `bytes` of device memory (cudaMalloc: 256-byte aligned). Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) LOWBIT_CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
  }
  template <typename T>
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size() * sizeof(T)) {
    upload(host.data(), bytes_);
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

  // cudaMemcpy from pageable memory may return before its DMA has landed, and it runs on the
  // legacy default stream, which the tests' cudaStreamNonBlocking streams do not wait for:
  // without the device sync a kernel could read a half-copied input (seen 2026-11-21 on an
  // H200: an int8 quantizer test read zeros in the rows copied last).
  void upload(const void* src, std::size_t n) {
    if (n > 0) {
      LOWBIT_CUDA_CHECK(cudaMemcpy(ptr_, src, n, cudaMemcpyHostToDevice));
      LOWBIT_CUDA_CHECK(cudaDeviceSynchronize());
    }
  }
  std::vector<uint8_t> download() const {
    std::vector<uint8_t> out(bytes_);
    if (bytes_ > 0) LOWBIT_CUDA_CHECK(cudaMemcpy(out.data(), ptr_, bytes_, cudaMemcpyDeviceToHost));
    return out;
  }
  // 0xFF bytes: NaN in f32, f16 and bf16 (all-ones exponent, nonzero mantissa), so any
  // element a kernel forgets to write shows up as non-finite.
  void poison(cudaStream_t stream = nullptr) {
    if (bytes_ > 0) LOWBIT_CUDA_CHECK(cudaMemsetAsync(ptr_, 0xFF, bytes_, stream));
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Sets an environment variable for the lifetime of the object, then restores the caller's
// value (or unsets it).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name), had_(std::getenv(name) != nullptr) {
    if (had_) saved_ = std::getenv(name);
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_.c_str(), saved_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, saved_;
  bool had_;
};

// A stream owned by the test.
class StreamHolder {
 public:
  StreamHolder() { LOWBIT_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~StreamHolder() { (void)cudaStreamDestroy(s_); }
  StreamHolder(const StreamHolder&) = delete;
  StreamHolder& operator=(const StreamHolder&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { LOWBIT_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

// Fresh random data for each case; the seed is printed by the tests that use it.
inline std::vector<float> random_normal(std::mt19937& rng, int64_t count, float stddev = 1.0f) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) x = dist(rng);
  return v;
}

// Values in dtype `t` (f32/f16/bf16) as raw bytes, rounded by the host codecs.
inline std::vector<uint8_t> encode(const std::vector<float>& v, DType t) {
  std::vector<uint8_t> out(v.size() * dtype_size(t));
  for (std::size_t i = 0; i < v.size(); ++i)
    store_from_f32(out.data(), t, static_cast<int64_t>(i), v[i]);
  return out;
}

inline std::vector<float> decode(const std::vector<uint8_t>& bytes, DType t, int64_t count) {
  std::vector<float> out(static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    out[static_cast<std::size_t>(i)] = load_as_f32(bytes.data(), t, i);
  return out;
}

// The values `v` become once stored in dtype `t`.
inline std::vector<float> rounded(const std::vector<float>& v, DType t) {
  return decode(encode(v, t), t, static_cast<int64_t>(v.size()));
}

// The raw bytes of `v` (e.g. fp32 scales for a DeviceBuffer).
template <typename T>
inline std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

inline int64_t count_non_finite(const std::vector<float>& v) {
  int64_t n = 0;
  for (float x : v) n += std::isfinite(x) ? 0 : 1;
  return n;
}

inline bool all_zero(const std::vector<float>& v) {
  for (float x : v)
    if (x != 0.0f) return false;
  return true;
}

// CUDA-graph tests: captures what `enqueue` launches on `s` into a graph (its Status must be
// ok), then launches the graph `replays` times, `before(i)` ahead of replay i (poison the
// outputs, upload new inputs) and `after(i)` once the stream has finished it (compare).
inline void capture_and_replay(cudaStream_t s, const std::function<Status()>& enqueue, int replays,
                               const std::function<void(int)>& before, const std::function<void(int)>& after,
                               cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal) {
  cudaGraph_t graph = nullptr;
  LOWBIT_CUDA_CHECK(cudaStreamBeginCapture(s, mode));
  const Status st = enqueue();
  LOWBIT_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  ASSERT_TRUE(st.ok()) << st.message();
  cudaGraphExec_t exec = nullptr;
  LOWBIT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < replays; ++i) {
    before(i);
    LOWBIT_CUDA_CHECK(cudaGraphLaunch(exec, s));
    LOWBIT_CUDA_CHECK(cudaStreamSynchronize(s));
    after(i);
  }
  LOWBIT_CUDA_CHECK(cudaGraphExecDestroy(exec));
  LOWBIT_CUDA_CHECK(cudaGraphDestroy(graph));
}

// Execution properties every kernel family's tests check, on one prepared problem:
//   run(s)     poisons the output, enqueues one call on s, synchronizes, returns the output bytes;
//   enqueue(s) only enqueues one call (its Status);
//   out        the output buffer both write; what: the case, for failure messages.
struct PreparedCall {
  std::function<std::vector<uint8_t>(cudaStream_t)> run;
  std::function<Status(cudaStream_t)> enqueue;
  DeviceBuffer* out;
  std::string what;
};

// Four runs on one stream give the same bytes (no atomics, fixed reduction orders).
inline void expect_bitwise_repeatable(const PreparedCall& c) {
  StreamHolder s;
  const std::vector<uint8_t> first = c.run(s.get());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.run(s.get()), first) << c.what;
}

// A call captured into a CUDA graph (global capture mode: no stray synchronizing API call
// inside) and replayed three times over a poisoned output gives the direct call's bytes.
inline void expect_graph_replays_match(const PreparedCall& c) {
  StreamHolder s;
  const std::vector<uint8_t> direct = c.run(s.get());
  c.out->poison(s.get());
  capture_and_replay(
      s.get(), [&] { return c.enqueue(s.get()); }, 3, [&](int) { c.out->poison(s.get()); },
      [&](int i) { EXPECT_EQ(c.out->download(), direct) << "graph replay " << i << ": " << c.what; },
      cudaStreamCaptureModeGlobal);
}

// Three prepared calls interleaved ten times on two streams (each with its own workspace)
// give their single-stream bytes: no state shared between calls.
inline void expect_two_streams_match(const PreparedCall& c0, const PreparedCall& c1, const PreparedCall& c2) {
  StreamHolder s0, s1;
  const std::vector<uint8_t> r0 = c0.run(s0.get()), r1 = c1.run(s1.get()), r2 = c2.run(s0.get());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(c0.enqueue(s0.get()).ok()) << c0.what;
    ASSERT_TRUE(c1.enqueue(s1.get()).ok()) << c1.what;
    ASSERT_TRUE(c2.enqueue(s1.get()).ok()) << c2.what;
  }
  s0.sync();
  s1.sync();
  EXPECT_EQ(c0.out->download(), r0) << c0.what;
  EXPECT_EQ(c1.out->download(), r1) << c1.what;
  EXPECT_EQ(c2.out->download(), r2) << c2.what;
}

// Benchmarks: the median per-call time in us of `enqueue(i)` (the i-th call, which uses operand
// copy i % copies) over 5 replays of a CUDA graph of back-to-back calls on `s`. The graph
// holds a multiple of `copies` calls, enough for >= min_replay_ms per replay (at most 2000).
inline double median_graph_replay_us(const std::function<void(int)>& enqueue, int copies, cudaStream_t s,
                                     double min_replay_ms) {
  // Calibrate the number of calls per replay from one untimed and one timed pass.
  cudaEvent_t e0, e1;
  LOWBIT_CUDA_CHECK(cudaEventCreate(&e0));
  LOWBIT_CUDA_CHECK(cudaEventCreate(&e1));
  for (int i = 0; i < copies; ++i) enqueue(i);
  LOWBIT_CUDA_CHECK(cudaEventRecord(e0, s));
  for (int i = 0; i < copies; ++i) enqueue(i);
  LOWBIT_CUDA_CHECK(cudaEventRecord(e1, s));
  LOWBIT_CUDA_CHECK(cudaEventSynchronize(e1));
  float ms = 0;
  LOWBIT_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
  const double per_call_ms = std::max(1e-4, static_cast<double>(ms) / copies);
  int iters = std::max(copies, static_cast<int>(std::ceil(min_replay_ms / per_call_ms)));
  iters = std::min((iters + copies - 1) / copies * copies, 2000);
  cudaGraph_t graph;
  LOWBIT_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < iters; ++i) enqueue(i);
  LOWBIT_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  LOWBIT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  LOWBIT_CUDA_CHECK(cudaGraphLaunch(exec, s));  // warm-up
  std::vector<double> samples;
  for (int r = 0; r < 5; ++r) {
    LOWBIT_CUDA_CHECK(cudaEventRecord(e0, s));
    LOWBIT_CUDA_CHECK(cudaGraphLaunch(exec, s));
    LOWBIT_CUDA_CHECK(cudaEventRecord(e1, s));
    LOWBIT_CUDA_CHECK(cudaEventSynchronize(e1));
    LOWBIT_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    samples.push_back(1000.0 * ms / iters);
  }
  LOWBIT_CUDA_CHECK(cudaGraphExecDestroy(exec));
  LOWBIT_CUDA_CHECK(cudaGraphDestroy(graph));
  LOWBIT_CUDA_CHECK(cudaEventDestroy(e0));
  LOWBIT_CUDA_CHECK(cudaEventDestroy(e1));
  std::sort(samples.begin(), samples.end());
  return samples[2];
}

}  // namespace lowbit::test
