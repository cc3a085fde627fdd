// Internal: the interface every GEMM implementation (CPU reference, cuBLAS baseline, our
// CUDA kernel families) provides behind lowbit::Gemm, and the two selectors that pick one.
#pragma once

#include <memory>
#include <string>

#include "lowbit/gemm.hpp"

namespace lowbit::detail {

class GemmImpl {
 public:
  virtual ~GemmImpl() = default;
  virtual std::string name() const = 0;
  virtual std::string weight_layout() const = 0;
  virtual std::size_t workspace_size() const = 0;
  // Packers: the default implementations throw "this kernel does not take <kind> weights".
  virtual PackedWeight pack(const IntWeight& w) const;
  virtual PackedWeight pack(const Fp8Tensor& w) const;
  virtual PackedWeight pack(const Int8Tensor& w) const;
  virtual PackedWeight pack_dense(const void* w) const;
  // Arguments were null-checked by Gemm::run() against the desc; must not allocate, sync
  // or print.
  virtual Status run(const GemmArgs& args, void* workspace, Stream stream) const = 0;
};

// The chosen implementation, or (impl == null) the reason none can run the problem.
struct Selection {
  std::unique_ptr<GemmImpl> impl;
  Status why_not;
};

// Format-independent checks shared by every device (sizes > 0, dtype combinations, the
// weight format's own validate()).
Status validate_desc(const GemmDesc& desc);

// src/cpu/cpu_gemm.cpp
Selection select_cpu(const GemmDesc& desc);
// src/cuda/heuristics/select.cpp, or src/api/no_cuda.cpp in a CPU-only build.
// `family`: empty, or the one family the caller allows (GemmOptions::family).
Selection select_cuda(const GemmDesc& desc, int device_index, const std::string& family);

}  // namespace lowbit::detail
