// lowbit bench: what is timed, one table row per variant (variants.cpp), and the tolerances.
//
// Adding a variant is adding one row to the table in variants.cpp. A row names the operand
// formats; the library's selector picks the kernel. Rows whose Gemm::can_implement() fails on
// this build / GPU are reported once as "not available: <reason>", so a kernel that lands
// later shows up in the tables without touching the harness.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/suites.hpp"
#include "lowbit/gemm.hpp"

namespace lowbit::bench {

enum class Runner : uint8_t {
  // cuBLAS cublasGemmEx called by the bench itself: dense f16 / bf16 only, the exact call
  // ANCHORS.md's "cuBLAS fp16" figures measured.
  kCublasGemmEx,
  // lowbit::Gemm made with GemmOptions::family = "cublas_baseline" (runner.cpp), whose kernel
  // must be a cuBLAS / cuBLASLt one (kernel_name() contains "cublas"): the library's cuBLASLt
  // baseline family, even once lowbit's own kernels for the format exist.
  kGemmBaseline,
  // lowbit::Gemm whose selector must pick one of lowbit's own kernels (kernel_name() without
  // "cublas"): while the selector still falls back to cuBLASLt, the row is "not available".
  kGemmLibrary,
  // lowbit::Gemm on Device::cpu() (the CPU reference backend), any kernel.
  kGemmCpu,
};

struct Variant {
  std::string name;           // unique; what --kernels matches
  std::vector<Suite> suites;  // the suites it runs in
  Runner runner;
  ActFormat a;
  WeightFormat w;
  DType out = DType::kF16;
  std::string reason;  // why it is in the table
};

// Every variant, baselines first (the speedup column needs them earlier in the same run).
const std::vector<Variant>& variant_table();

bool in_suite(const Variant& v, Suite s);
GemmDesc make_desc(const Variant& v, int64_t m, int64_t n, int64_t k);

// The variant whose time is the speedup reference for `v` in suite `s` (same run, same shape):
// Suite 1: cublas_f16, or cublas_bf16 for bf16 activations; Suite 2: cublaslt_fp8_block;
// the CPU small suite: cpu_f16. Equal to v.name for the references themselves.
std::string speedup_reference(const Variant& v, Suite s);

// The kernel-name rule of v.runner: "" when `kernel` is acceptable, else the reason.
std::string kernel_rule_violation(const Variant& v, const std::string& kernel);

// Largest relative Frobenius error ||out - ref|| / ||ref|| accepted, per format.
struct Tolerance {
  const char* format;  // "f16", "bf16", "fp8", "int8"
  double max_rel_err;
};
Tolerance tolerance_for(const GemmDesc& desc);

}  // namespace lowbit::bench
