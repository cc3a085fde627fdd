// lowbit: GPTQ and AWQ checkpoint tensors <-> the canonical IntWeight.
//
// Both store W (n = out_features, k = in_features) with W[n][k] = (q - z) * s, unsigned
// codes q, per-group scales s and integer zero points z; they differ in how the integers
// are packed into int32 tensors. The conventions implemented here (one test each in
// tests/cpu/test_import_gptq_awq.cpp):
//
// GPTQ (AutoGPTQ / GPTQModel checkpoints, 4- and 8-bit; p = 32 / bits codes per int32):
//   qweight  int32 (k / p, n), packed along K: code (n, k) is bits [(k % p) bits,
//            (k % p + 1) bits) of qweight[k / p][n] (least significant first).
//   qzeros   int32 (groups, n / p), packed along N the same way: the stored value of
//            (g, n) is bits [(n % p) bits, ...) of qzeros[g][n / p].
//            checkpoint_format "gptq" (v1, AutoGPTQ): stored = z - 1, so z = stored + 1.
//              This off-by-one is kept by every v1 reader; a stored all-ones field means
//              z = 2^bits, which no 4/8-bit code can reach, and is refused. Symmetric
//              (sym=True) v1 checkpoints store 2^(bits-1) - 1 (0x77777777 at 4 bits).
//            checkpoint_format "gptq_v2" (GPTQModel): stored = z.
//   scales   (groups, n) in the checkpoint's float dtype.
//   g_idx    int32 (k): the group of column k (act-order, desc_act=True); without
//            act-order g_idx[k] = k / group_size (or absent).
//   group_size -1 (per-channel) is one group.
// AWQ (AutoAWQ "GEMM" version, 4-bit only):
//   qweight  int32 (k, n / 8), packed along N in AWQ's interleaved order: nibble i (bits
//            4i..4i+3) of qweight[k][c] holds column n = 8c + kAwqOrder[i] with
//            kAwqOrder = {0, 2, 4, 6, 1, 3, 5, 7} (its inverse, used by readers, is
//            {0, 4, 1, 5, 2, 6, 3, 7}).
//   qzeros   int32 (groups, n / 8), the same order, stored = z (no offset).
//   scales   (groups, n).
//   No act-order.
// Scales are carried as fp32 here (exact copies of f16/bf16 values); the target format's
// scale_dtype must represent them exactly (IntWeight::validate()).
#pragma once

#include <cstdint>
#include <vector>

#include "lowbit/formats.hpp"

namespace lowbit {

inline constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

enum class GptqZeros : uint8_t {
  kV1,  // "gptq": qzeros store z - 1
  kV2,  // "gptq_v2": qzeros store z
};

struct GptqTensors {
  int bits = 4;          // 4 or 8
  int group_size = 128;  // 32, 64, 128, or -1 for per-channel
  int64_t n = 0;
  int64_t k = 0;
  std::vector<int32_t> qweight;  // (k * bits / 32, n)
  std::vector<int32_t> qzeros;   // (groups, n * bits / 32)
  std::vector<float> scales;     // (groups, n)
  std::vector<int32_t> g_idx;    // (k), or empty for the plain k / group_size grouping
};

struct AwqTensors {
  int bits = 4;          // 4 only
  int group_size = 128;  // 32, 64, 128, or -1 for per-channel
  int64_t n = 0;
  int64_t k = 0;
  std::vector<int32_t> qweight;  // (k, n / 8), AWQ order
  std::vector<int32_t> qzeros;   // (groups, n / 8), AWQ order
  std::vector<float> scales;     // (groups, n)
};

// Checkpoint -> canonical, in `target` (its bits and group size must match; zero =
// kSymmetric demands every z == 2^(bits-1); act_order demands g_idx). Throws lowbit::Error
// with the offending tensor and value.
IntWeight import_gptq(const GptqTensors& t, GptqZeros zeros, const IntWeightFormat& target);
IntWeight import_awq(const AwqTensors& t, const IntWeightFormat& target);

// Canonical -> checkpoint (the inverse builders the tests use to make tensors by the
// published conventions). v1 cannot store z = 0 and throws for it.
GptqTensors export_gptq(const IntWeight& w, GptqZeros zeros);
AwqTensors export_awq(const IntWeight& w);

}  // namespace lowbit
