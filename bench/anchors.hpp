// lowbit bench: the peer figures the tables are printed next to, in one place.
//
// Source: ANCHORS.md of the lowbit project ("Anchors: what lowbit must beat, measured"), one
// NVIDIA H200 (132 SMs, 60 MB L2, CUDA 13.0, driver 580) on 2026-11-21, with the method
// `lowbit bench` reproduces. Compare only with figures taken on the same kind of GPU.
// Microseconds; NaN where the table says n/a.
#pragma once

#include <cstdint>
#include <limits>

namespace lowbit::bench::anchors {

inline constexpr const char* kSource =
    "ANCHORS.md (NVIDIA H200, 132 SMs, CUDA 13.0, driver 580, 2026-11-21)";
inline constexpr const char* kGpuName = "H200";  // the anchors apply when the GPU name has it
inline constexpr double kNa = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kCopyGBps = 4263.0;  // device-to-device copy, bytes read + written

// Suite 1: sum of the four Llama-3.1-8B layers (qkv, o, gate_up, down), per M.
inline constexpr int kSuite1Columns = 8;
inline constexpr const char* kSuite1ColumnNames[kSuite1Columns] = {
    "floor W4",       "floor fp16",     "cuBLAS fp16",         "Marlin W4 g128",
    "GemLite W4 g128", "cuBLASLt fp8 tensor", "cuBLASLt fp8 row", "cuBLASLt fp8 block"};
struct Suite1Row {
  int64_t m;
  double us[kSuite1Columns];
};
inline constexpr Suite1Row kSuite1[] = {
    {1, {26.4, 102.4, 118.8, 69.6, 71.6, 67.7, 120.7, kNa}},
    {16, {26.9, 102.8, 122.8, 69.1, 158.3, 66.9, 115.2, 97.8}},
    {64, {28.5, 104.4, 129.0, 134.9, 307.7, 69.6, 107.8, 112.1}},
    {256, {34.7, 110.7, 187.9, 331.0, 656.0, 109.1, 139.3, 147.8}},
    {1024, {59.8, 135.8, 695.5, 1298.2, 2551.5, 376.4, 415.6, 440.6}},
    {4096, {160.2, 236.1, 2677.4, 5501.5, 10144.8, 1533.9, 1547.7, 1674.6}},
};

// Suite 2: geometric mean over the 18 fp8 block-scaled shapes.
struct Suite2Row {
  const char* what;
  double geomean_us;
};
inline constexpr Suite2Row kSuite2[] = {
    {"speed of light, datasheet rates (1979 TFLOP/s, 4.8 TB/s)", 17.9},
    {"speed of light, measured ceilings (1426 TFLOP/s, 4.26 TB/s)", 24.2},
    {"DeepGEMM (May 2025 release, JIT per shape)", 37.9},
    {"cuBLASLt blockwise (torch scaled_mm 1x128 x 128x128)", 44.4},
    {"the seed's MI300X HIP kernel (its own table, other hardware)", 136.1},
};

}  // namespace lowbit::bench::anchors
