// lowbit bench: the interface to the CUDA timing code.
//
// Everything that talks to the CUDA runtime or cuBLAS lives in bench/cuda/ (built only with
// LOWBIT_CUDA on); this header is plain C++. gpu_backend_stub.cpp provides open_gpu_backend()
// for the CPU-only build, the one place that tests LOWBIT_WITH_CUDA.
//
// The method (ANCHORS.md, METHOD.md): operands generated on the device (activations and dense
// weights by a hash-based fill kernel; quantized weights packed on the host and uploaded),
// rotated through enough copies that one rotation touches more than 3x the L2; a CUDA graph of
// `calls` launches cycling through the copies (one replay >= target_replay_ms, calls >= copies
// and a multiple of them); one warm-up replay, then `reps` replays timed with events; per-call
// time = median replay time / calls.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lowbit/gemm.hpp"

namespace lowbit::bench {

struct GpuProps {
  int device = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  uint64_t memory_bytes = 0;
  uint64_t l2_bytes = 0;
  std::string driver_version;   // "13.0"
  std::string runtime_version;  // "13.0"
};

struct CopyBandwidth {
  double gbps = 0;          // (bytes read + bytes written) / median time
  uint64_t bytes = 0;       // size of the copied buffer
  std::vector<double> us;   // every timed copy
};

struct GpuCase {
  GemmDesc desc;
  // lowbit::Gemm to time (made for this device), with its weights packed on the host for its
  // weight_layout(). Null: time cublasGemmEx instead (dense f16 / bf16 only), with the dense
  // weights filled on the device.
  const Gemm* gemm = nullptr;
  const PackedWeight* weight = nullptr;
  uint64_t seed = 0;               // of this case's activations
  uint64_t weight_seed = 0;        // of the dense weights cublasGemmEx reads (filled on device)
  int reps = 5;
  double target_replay_ms = 50.0;  // 0: one rotation per graph (--quick)
  std::vector<int64_t> sample_rows;  // rows of operand copy 0's output to bring back
  bool want_dense_weight = false;  // cublasGemmEx: bring back copy 0's weights as fp32 (n, k)
};

struct GpuCaseResult {
  double us_per_call = 0;
  std::vector<double> replay_us;  // each timed replay, microseconds
  int copies = 0;                 // operand sets rotated through
  int calls = 0;                  // launches per graph replay
  uint64_t rotation_bytes = 0;    // bytes of all the copies: > 3x L2 unless memory was short
  // Bytes one call must move at least, from the buffer sizes: A (+ its scales), the packed
  // weights (data + scales + zeros + index), the output.
  uint64_t bytes_a = 0;
  uint64_t bytes_w = 0;
  uint64_t bytes_out = 0;
  std::vector<uint8_t> a_rows;    // sample rows of copy 0's A: (rows, k) of desc.a.dtype
  std::vector<float> a_scales;    // copy 0's whole A scale buffer (fp8 / int8 activations)
  std::vector<float> out_rows;    // sample rows of copy 0's output as fp32, (rows, n)
  std::vector<float> dense_w;     // (n, k) when want_dense_weight
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  virtual const GpuProps& props() const = 0;
  // cudaMemcpyAsync device to device of a >= 1 GiB buffer (less only when memory is short),
  // median of `reps` after one warm-up copy.
  virtual CopyBandwidth copy_bandwidth(int reps) = 0;
  // Times one case; throws lowbit::Error (naming the call, file and line) on any failure.
  virtual GpuCaseResult run_case(const GpuCase& c) = 0;
  // False after an error that poisoned the CUDA context (later cases cannot run).
  virtual bool healthy() = 0;
};

// The backend for CUDA device `device`, or null with the reason in *why_not (built without
// CUDA, no driver, no device). Throws lowbit::Error when GPUs exist but `device` is not one.
std::unique_ptr<GpuBackend> open_gpu_backend(int device, std::string* why_not);

}  // namespace lowbit::bench
