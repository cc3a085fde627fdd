// Internal: the plan (tile configuration, split-K factor) of sm90_fp8_gemm for a problem,
// chosen from m, n, k and the SM count by a small cost model (sm90_fp8_gemm_heuristic.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace lowbit::cuda {

struct Sm90Fp8Plan {
  int config = 0;  // index into kSm90Fp8Configs
  int splits = 1;  // K splits (>= 1, <= ceil(k / 128))
  int sk_tiles = 0;  // stream-K over the last sk_tiles tiles (0: none; needs splits == 1)
  int grid = 0;      // persistent CTAs (0: min(units, SMs); tests force other counts)
  std::string why;  // the model's figures for the choice, for `lowbit bench --explain`-like output
};

// `stream_k` false: never the stream-K rule; `int8`: only the configurations instantiated for
// int8 (both for sm90_int8_gemm, whose kernels have no stream-K); `block`: the 1x128 x 128x128
// block-scaled mode (rules measured in that mode only).
Sm90Fp8Plan sm90_fp8_gemm_plan(int64_t m, int64_t n, int64_t k, int sm_count, bool stream_k = true,
                               bool int8 = false, bool block = false);

}  // namespace lowbit::cuda
