// gemv_probe: one lowbit::Gemm of one shape, for ncu and quick timing on the device machine.
// Development tool (not built by CMake): build against a CUDA build of the library:
//   nvcc -O2 -std=c++17 -arch=sm_90a -Iinclude -Ibuild-dev/include -Isrc tools/dev/gemv_probe.cu \
//        build-dev/src/liblowbit.a -lcublasLt -lcublas -lpthread -o build-carry/probe/gemv_probe
// (with -I. for tools/dev/graph_timing.cuh)
// Usage: gemv_probe n k m format act [family] [eager]
//   format: w4g128, w1g128, w8 ... (IntWeightFormat::parse); act: f16 | bf16;
//   family: "" for the heuristics' choice, else a family name (GemmOptions::family).
//   eager: number of eager calls before the timed graph (ncu --launch-skip counts these).
// Prints the kernel, layout and the per-call time (CUDA graph of calls cycling through
// copies of the operands past 3x L2, median of 5 replays: the bench's method).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "lowbit/lowbit.hpp"
#include "tools/dev/graph_timing.cuh"


int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: gemv_probe n k m format act [family] [eager]\n");
    return 2;
  }
  const int64_t n = std::atoll(argv[1]), k = std::atoll(argv[2]), m = std::atoll(argv[3]);
  auto fmt = lowbit::IntWeightFormat::parse(argv[4]);
  if (!fmt) {
    std::fprintf(stderr, "bad format %s\n", argv[4]);
    return 2;
  }
  const bool bf16 = std::string(argv[5]) == "bf16";
  fmt->scale_dtype = bf16 ? lowbit::DType::kBF16 : lowbit::DType::kF16;
  lowbit::GemmOptions opt;
  if (argc > 6) opt.family = argv[6];
  const int eager = argc > 7 ? std::atoi(argv[7]) : 3;

  lowbit::IntWeight w;
  w.format = *fmt;
  w.n = n;
  w.k = k;
  std::mt19937 rng(1);
  w.codes.resize(n * k);
  const int qmax = (1 << fmt->bits) - 1;
  for (auto& c : w.codes) c = static_cast<uint8_t>(rng() & qmax);
  w.scales.resize(n * w.groups());
  for (auto& s : w.scales) s = std::ldexp(1.0f + (rng() & 7) / 8.0f, -7);  // exact in f16 and bf16
  if (fmt->zero == lowbit::ZeroPoint::kInteger) {
    w.zeros.resize(n * w.groups());
    for (auto& z : w.zeros) z = static_cast<uint8_t>(rng() & qmax);
  }

  lowbit::GemmDesc d;
  d.m = m;
  d.n = n;
  d.k = k;
  d.a.dtype = bf16 ? lowbit::DType::kBF16 : lowbit::DType::kF16;
  d.w = lowbit::WeightFormat::integer(*fmt);
  d.out_dtype = d.a.dtype;
  lowbit::Gemm gemm(d, lowbit::Device::cuda(0), opt);
  if (auto s = gemm.can_implement(); !s.ok()) {
    std::fprintf(stderr, "can_implement: %s\n", s.message().c_str());
    return 1;
  }
  lowbit::PackedWeight pw = gemm.pack(w);
  const size_t wb = pw.data.size() + pw.scales.size() + pw.zeros.size() + pw.index.size();
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  const int copies = std::max<int>(2, static_cast<int>(3.0 * l2 / wb) + 1);
  struct Set {
    void *data = nullptr, *scales = nullptr, *zeros = nullptr, *index = nullptr, *a = nullptr, *y = nullptr;
  };
  std::vector<Set> sets(copies);
  auto up = [&](const std::vector<uint8_t>& v, void** p) {
    if (v.empty()) return;
    CK(cudaMalloc(p, v.size()));
    CK(cudaMemcpy(*p, v.data(), v.size(), cudaMemcpyHostToDevice));
  };
  std::vector<uint16_t> a(m * k);
  for (auto& v : a) v = bf16 ? lowbit::f32_to_bf16(0.5f) : lowbit::f32_to_f16(0.5f);
  for (auto& s : sets) {
    up(pw.data, &s.data);
    up(pw.scales, &s.scales);
    up(pw.zeros, &s.zeros);
    up(pw.index, &s.index);
    CK(cudaMalloc(&s.a, a.size() * 2));
    CK(cudaMemcpy(s.a, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&s.y, m * n * 2));
  }
  void* ws = nullptr;
  if (gemm.workspace_size()) CK(cudaMalloc(&ws, gemm.workspace_size()));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  auto call = [&](int i) {
    const Set& s = sets[i % copies];
    lowbit::GemmArgs args;
    args.a = s.a;
    args.w.data = s.data;
    args.w.scales = s.scales;
    args.w.zeros = s.zeros;
    args.w.index = s.index;
    args.out = s.y;
    if (auto r = gemm.run(args, ws, st); !r.ok()) {
      std::fprintf(stderr, "run: %s\n", r.message().c_str());
      std::exit(1);
    }
  };
  for (int i = 0; i < eager; ++i) call(i);
  CK(cudaStreamSynchronize(st));
  int calls = copies;
  while (calls < 1500) calls += copies;
  const double us = graph_us_per_call(st, calls, call);
  std::printf("%s n=%lld k=%lld m=%lld %s: %s [%s] %.2f us  %.0f GB/s (weights)\n", argv[4],
              (long long)n, (long long)k, (long long)m, argv[5], gemm.kernel_name().c_str(),
              gemm.weight_layout().c_str(), us, wb / (us * 1e-6) / 1e9);
  return 0;
}
