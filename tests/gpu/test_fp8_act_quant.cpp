// The fp8 activation quantizer kernels (src/cuda/quant/smxx_fp8_act_quant.*) through the
// public lowbit::ActQuant API, against the CPU path (Device::cpu(), itself checked against an
// independent recomputation in tests/cpu/test_act_quant.cpp) and the host quantizers
// (quantize_fp8 / quantize_fp8_static + gemm_a_scales): codes AND scales equal bit for bit.
//
// Every mode x f16/bf16 x m in {1, 3, 4, 5, 64, 129} x k in {16, 112, 128, 144, 4096} x three
// data flavors: "mixed" (rows or 128-column groups of plain, wide-range, tiny (amax clamp),
// +-0, large and subnormal values), "ties" (every e4m3 value and midpoint and their neighbours
// in the input dtype, with +-448 in every group so the multiplier is exactly 1; static mode
// adds values past 448 that saturate) and "tiny" (all |x| < 1e-4). Outputs are poisoned with
// 0xFF before each run (the code 0xFF is -NaN, never produced; 0xFFFFFFFF scales are NaN), so
// an element the kernel does not write shows; the amax workspace is poisoned too. Then: row
// strides, rows longer than one chunk, grids past the amax kernel's block cap, NaN / inf
// inputs, the static scale aliasing the output, CUDA-graph capture, argument errors, and the
// outputs driving lowbit::Gemm.
//
// The int8 modes (suite smxx_int8_act_quant, the kernel smxx_int8_act_quant_kernel): codes,
// scales and zero points bit for bit against the CPU path and quantize_int8(), both modes x
// f16/bf16 x m in {1, 3, 64, 1000} x k in {16, 4096, 14336, 40000} (40000: two chunks), rows of
// every kind of make_int8_values(); each case runs twice with code poisons 0xFF and 0x00 (every
// byte is an int8 code) and zero points poisoned out of range. Then row strides, NaN / inf,
// CUDA-graph capture, argument errors, and, on sm_90, the outputs driving sm90_int8_gemm (vs
// the CPU Gemm on the same codes) and a GEMM -> ActQuant -> GEMM chain with programmatic
// dependent launches.
//
// int8 static per tensor (int8-static, the same kernel's static instance): codes, scales and
// zero points bit for bit against the CPU path, with and without the zero point x f16/bf16 x m
// in {1, 3, 64, 1000} x k in {16, 4096, 14336}, the scales and zero points of
// act_quant_cases.hpp (tiny and huge s, z in {-128, -3, 0, 127}), two poisons; NaN / inf input
// and unchecked s / z; CUDA-graph capture (s and z read at replay time); argument errors; and
// on sm_90 ActQuant(int8-static) -> sm90_int8_gemm against the same GEMM on the CPU path's
// codes.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "act_quant_cases.hpp"
#include "cuda/common/check.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/quant/smxx_fp8_act_quant.hpp"
#include "lowbit/act_quant.hpp"
#include "lowbit/formats.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"
#include "test_gpu_common.hpp"

namespace lowbit::test {
namespace {

uint32_t g_seed = 9100;  // each case draws the next seed; printed in the failure message

// ---------------------------------------------------------------------------------------
// Running (the inputs and run_cpu(): act_quant_cases.hpp)
// ---------------------------------------------------------------------------------------
// One ActQuant::run on the GPU. `alias`: static mode with `scales` = `static_scale`. Codes
// poisoned with `code_poison` first, scales with NaN, zero points with kZerosPoison.
// `static_z`: int8-static's zero point (uploaded when d.int8_zero_point).
Quantized run_gpu(const ActQuantDesc& d, const std::vector<uint8_t>& x, float static_s,
                  bool alias = false, uint8_t code_poison = 0xFF, int32_t static_z = 0) {
  ActQuant op(d, Device::cuda(0));
  EXPECT_TRUE(op.can_implement().ok()) << op.can_implement().message();
  EXPECT_EQ(op.kernel_name(), act_quant_is_int8(d.mode) ? "smxx_int8_act_quant" : "smxx_fp8_act_quant");
  EXPECT_EQ(op.workspace_size(), d.mode == ActQuantMode::kDynamicPerTensor ? 4u : 0u);
  const bool zp = writes_zeros(d);
  const int64_t count = op.scales_count();
  DeviceBuffer dx(x), dq(static_cast<size_t>(d.m * d.k)), dscales(static_cast<size_t>(count) * 4),
      dstatic(std::vector<float>{static_s}), dws(op.workspace_size()),
      dzeros(zp ? static_cast<size_t>(d.m) * 4 : 0), dstatic_z(std::vector<int32_t>{static_z});
  StreamHolder stream;
  LOWBIT_CUDA_CHECK(cudaMemsetAsync(dq.get(), code_poison, dq.bytes(), stream.get()));
  dscales.poison(stream.get());
  dws.poison(stream.get());  // the amax word must be reset by run() itself
  if (zp) LOWBIT_CUDA_CHECK(cudaMemsetAsync(dzeros.get(), kZerosPoisonByte, dzeros.bytes(), stream.get()));
  ActQuantArgs a;
  a.x = dx.get();
  a.static_scale = dstatic.as<float>();
  a.q = dq.get();
  a.scales = alias ? dstatic.as<float>() : dscales.as<float>();
  a.zeros = zp ? dzeros.as<int32_t>() : nullptr;
  if (d.mode == ActQuantMode::kInt8StaticPerTensor && d.int8_zero_point) a.static_zero_point = dstatic_z.as<int32_t>();
  const Status s = op.run(a, dws.get(), stream.get());
  EXPECT_TRUE(s.ok()) << s.message();
  stream.sync();
  Quantized out;
  out.q = dq.download();
  const std::vector<uint8_t> raw = (alias ? dstatic : dscales).download();
  out.scales.resize(raw.size() / 4);
  std::memcpy(out.scales.data(), raw.data(), raw.size());
  if (zp) {
    const std::vector<uint8_t> zraw = dzeros.download();
    out.zeros.resize(zraw.size() / 4);
    std::memcpy(out.zeros.data(), zraw.data(), zraw.size());
  }
  return out;
}

// Codes, scales and zero points equal bit for bit; the first differences described (row,
// column).
void expect_same(const Quantized& got, const Quantized& want, int64_t k, const std::string& what) {
  ASSERT_EQ(got.q.size(), want.q.size()) << what;
  ASSERT_EQ(got.scales.size(), want.scales.size()) << what;
  ASSERT_EQ(got.zeros.size(), want.zeros.size()) << what;
  int64_t bad_q = 0, bad_s = 0;
  std::ostringstream first;
  for (size_t i = 0; i < got.q.size(); ++i)
    if (got.q[i] != want.q[i] && bad_q++ < 5)
      first << "\n  code (" << static_cast<int64_t>(i) / k << ", " << static_cast<int64_t>(i) % k
            << "): gpu 0x" << std::hex << int{got.q[i]} << ", cpu 0x" << int{want.q[i]} << std::dec;
  for (size_t i = 0; i < got.scales.size(); ++i)
    if (bits_of(got.scales[i]) != bits_of(want.scales[i]) && bad_s++ < 5)
      first << "\n  scale[" << i << "]: gpu " << got.scales[i] << " (0x" << std::hex
            << bits_of(got.scales[i]) << "), cpu " << want.scales[i] << " (0x"
            << bits_of(want.scales[i]) << ")" << std::dec;
  for (size_t i = 0; i < got.zeros.size(); ++i)
    if (got.zeros[i] != want.zeros[i] && bad_s++ < 10)
      first << "\n  zero[" << i << "]: gpu " << got.zeros[i] << ", cpu " << want.zeros[i];
  EXPECT_EQ(bad_q + bad_s, 0) << what << ": " << bad_q << " codes and " << bad_s
                              << " scales / zero points differ" << first.str();
}

// The host quantizer's result for finite input, as (codes, gemm_a_scales()).
Quantized host_quantizer(ActQuantMode mode, const std::vector<float>& x, int64_t m, int64_t k,
                         float static_s) {
  const Fp8Tensor t = mode == ActQuantMode::kStaticPerTensor
                          ? quantize_fp8_static(x.data(), m, k, static_s)
                          : quantize_fp8(x.data(), m, k, Fp8Format{DType::kE4M3, act_quant_scaling(mode)});
  return Quantized{t.codes, gemm_a_scales(t), {}};
}

// One case: GPU vs the CPU path, and (finite input) vs the host quantizer.
void check_case(const ActQuantDesc& d, const std::vector<float>& x, const std::vector<uint8_t>& bytes,
                float static_s, const std::string& what, bool finite = true) {
  SCOPED_TRACE(what);
  const Quantized gpu = run_gpu(d, bytes, static_s);
  const Quantized cpu = run_cpu(d, bytes, static_s);
  expect_same(gpu, cpu, d.k, what + " (gpu vs cpu path)");
  if (finite) {
    expect_same(gpu, host_quantizer(d.mode, x, d.m, d.k, static_s), d.k, what + " (gpu vs host quantizer)");
    EXPECT_EQ(std::count(gpu.q.begin(), gpu.q.end(), uint8_t{0x7F}) +
                  std::count(gpu.q.begin(), gpu.q.end(), uint8_t{0xFF}),
              0)
        << what << ": NaN codes from finite input";
  }
}

void sweep(ActQuantMode mode, DType t) {
  LOWBIT_REQUIRE_GPU();
  for (Flavor f : {Flavor::kMixed, Flavor::kTies, Flavor::kTiny})
    for (int64_t m : kMs)
      for (int64_t k : kKs) {
        const uint32_t seed = g_seed++;
        std::mt19937 rng(seed);
        const ActQuantDesc d = make_desc(mode, t, m, k);
        const std::vector<float> x = make_values(mode, t, m, k, f, rng);
        check_case(d, x, encode_rows(x, t, m, k, k, 0.0f), static_scale_of(f),
                   case_name(d, flavor_name(f), seed));
        if (::testing::Test::HasFatalFailure()) return;
      }
}

// ---------------------------------------------------------------------------------------
// The sweep: every mode x dtype
// ---------------------------------------------------------------------------------------
TEST(smxx_fp8_act_quant, per_token_f16) { sweep(ActQuantMode::kDynamicPerToken, DType::kF16); }
TEST(smxx_fp8_act_quant, per_token_bf16) { sweep(ActQuantMode::kDynamicPerToken, DType::kBF16); }
TEST(smxx_fp8_act_quant, per_tensor_f16) { sweep(ActQuantMode::kDynamicPerTensor, DType::kF16); }
TEST(smxx_fp8_act_quant, per_tensor_bf16) { sweep(ActQuantMode::kDynamicPerTensor, DType::kBF16); }
TEST(smxx_fp8_act_quant, static_f16) { sweep(ActQuantMode::kStaticPerTensor, DType::kF16); }
TEST(smxx_fp8_act_quant, static_bf16) { sweep(ActQuantMode::kStaticPerTensor, DType::kBF16); }
TEST(smxx_fp8_act_quant, block1x128_f16) { sweep(ActQuantMode::kDynamicBlock1x128, DType::kF16); }
TEST(smxx_fp8_act_quant, block1x128_bf16) { sweep(ActQuantMode::kDynamicBlock1x128, DType::kBF16); }

// ---------------------------------------------------------------------------------------
// Edges of the kernel design
// ---------------------------------------------------------------------------------------

// Rows of X `ld` elements apart with huge garbage in the gaps: only the k columns are read.
TEST(smxx_fp8_act_quant, row_stride) {
  LOWBIT_REQUIRE_GPU();
  for (ActQuantMode mode : kModes)
    for (DType t : kDTypes)
      for (int64_t k : {16, 144, 4096})
        for (int64_t pad : {8, 24}) {
          const int64_t m = 5, ld = k + pad;
          const uint32_t seed = g_seed++;
          std::mt19937 rng(seed);
          const std::vector<float> x = make_values(mode, t, m, k, Flavor::kMixed, rng);
          const ActQuantDesc d = make_desc(mode, t, m, k, ld);
          check_case(d, x, encode_rows(x, t, m, k, ld, 30000.0f), 0.02f, case_name(d, "mixed", seed));
        }
}

// Rows longer than one chunk (threads_per_row is capped at 1024: k > 32768 takes several
// passes; per-token then reads the later chunks twice).
TEST(smxx_fp8_act_quant, long_rows_several_chunks) {
  LOWBIT_REQUIRE_GPU();
  for (ActQuantMode mode : kModes)
    for (DType t : kDTypes)
      for (int64_t k : {32768, 33024, 65552})
        for (int64_t m : {1, 3}) {
          const uint32_t seed = g_seed++;
          std::mt19937 rng(seed);
          const std::vector<float> x = make_values(mode, t, m, k, Flavor::kMixed, rng);
          const ActQuantDesc d = make_desc(mode, t, m, k);
          check_case(d, x, encode_rows(x, t, m, k, k, 0.0f), 0.02f, case_name(d, "mixed", seed));
        }
}

// More rows than the per-tensor amax kernel has blocks (1024): its grid-stride row loop; and
// many rows per block for short rows.
TEST(smxx_fp8_act_quant, many_rows) {
  LOWBIT_REQUIRE_GPU();
  struct Shape {
    int64_t m, k;
  };
  for (ActQuantMode mode : kModes)
    // 20000 x 16 and 17000 x 64: 16 rows per block, 1250 / 1063 blocks; 1100 x 4096: a
    // block per row, 1100 blocks.
    for (const Shape& s : {Shape{20000, 16}, Shape{17000, 64}, Shape{1100, 4096}}) {
      const DType t = DType::kBF16;
      const uint32_t seed = g_seed++;
      std::mt19937 rng(seed);
      const std::vector<float> x = make_values(mode, t, s.m, s.k, Flavor::kMixed, rng);
      const ActQuantDesc d = make_desc(mode, t, s.m, s.k);
      check_case(d, x, encode_rows(x, t, s.m, s.k, s.k, 0.0f), 0.02f, case_name(d, "mixed", seed));
    }
}

// NaN and +-inf inputs: the documented semantics (act_quant.hpp), the same on both devices.
TEST(smxx_fp8_act_quant, non_finite_inputs) {
  LOWBIT_REQUIRE_GPU();
  for (ActQuantMode mode : kModes)
    for (DType t : kDTypes)
      for (int64_t k : {16, 144, 4096}) {
        const int64_t m = 7;
        const uint32_t seed = g_seed++;
        std::mt19937 rng(seed);
        std::vector<float> x = make_values(mode, t, m, k, Flavor::kMixed, rng);
        std::vector<uint8_t> bytes = encode_rows(x, t, m, k, k, 0.0f);
        // Raw 16-bit NaNs (quiet, signalling, both signs) and infinities at random places of
        // rows 1..5; rows 0 and 6 stay finite.
        const std::vector<uint16_t> specials =
            t == DType::kF16 ? std::vector<uint16_t>{0x7E00, 0xFE00, 0x7C01, 0xFC01, 0x7C00, 0xFC00}
                             : std::vector<uint16_t>{0x7FC0, 0xFFC0, 0x7F81, 0xFF81, 0x7F80, 0xFF80};
        std::uniform_int_distribution<int64_t> col(0, k - 1);
        for (int64_t r = 1; r <= 5; ++r)
          for (int i = 0; i < 3; ++i) {
            const uint16_t h = specials[static_cast<size_t>((r + i) % (r == 5 ? 4 : 6))];  // row 5: NaN only
            std::memcpy(bytes.data() + 2 * (r * k + col(rng)), &h, 2);
          }
        const ActQuantDesc d = make_desc(mode, t, m, k);
        check_case(d, x, bytes, 0.02f, case_name(d, "non-finite", seed), /*finite=*/false);
      }
}

TEST(smxx_fp8_act_quant, static_scale_aliases_scales) {
  LOWBIT_REQUIRE_GPU();
  for (DType t : kDTypes) {
    const int64_t m = 64, k = 4096;
    std::mt19937 rng(g_seed++);
    const std::vector<float> x = make_values(ActQuantMode::kStaticPerTensor, t, m, k, Flavor::kMixed, rng);
    const ActQuantDesc d = make_desc(ActQuantMode::kStaticPerTensor, t, m, k);
    const std::vector<uint8_t> bytes = encode_rows(x, t, m, k, k, 0.0f);
    const Quantized gpu = run_gpu(d, bytes, 0.02f, /*alias=*/true);
    expect_same(gpu, run_cpu(d, bytes, 0.02f), k, d.describe() + " (scales == static_scale)");
  }
}

// run() is stream-ordered work only: captured in a CUDA graph and replayed (twice, with new
// input between), it gives the CPU path's result.
TEST(smxx_fp8_act_quant, graph_capture) {
  LOWBIT_REQUIRE_GPU();
  for (ActQuantMode mode : kModes) {
    const DType t = DType::kBF16;
    const int64_t m = 33, k = 1040;
    const ActQuantDesc d = make_desc(mode, t, m, k);
    ActQuant op(d, Device::cuda(0));
    ASSERT_TRUE(op.can_implement().ok()) << op.can_implement().message();
    DeviceBuffer dx(static_cast<size_t>(m * k * 2)), dq(static_cast<size_t>(m * k)),
        dscales(static_cast<size_t>(op.scales_count()) * 4), dstatic(std::vector<float>{0.02f}),
        dws(op.workspace_size());
    StreamHolder stream;
    ActQuantArgs a;
    a.x = dx.get();
    a.static_scale = dstatic.as<float>();
    a.q = dq.get();
    a.scales = dscales.as<float>();
    uint32_t seed = 0;
    std::vector<uint8_t> bytes;
    capture_and_replay(
        stream.get(), [&] { return op.run(a, dws.get(), stream.get()); }, 2,
        [&](int) {  // a new input for every replay
          seed = g_seed++;
          std::mt19937 rng(seed);
          const std::vector<float> x = make_values(mode, t, m, k, Flavor::kMixed, rng);
          bytes = encode_rows(x, t, m, k, k, 0.0f);
          dx.upload(bytes.data(), bytes.size());
          dq.poison(stream.get());
          dscales.poison(stream.get());
          dws.poison(stream.get());
        },
        [&](int) {
          Quantized gpu;
          gpu.q = dq.download();
          const std::vector<uint8_t> raw = dscales.download();
          gpu.scales.resize(raw.size() / 4);
          std::memcpy(gpu.scales.data(), raw.data(), raw.size());
          expect_same(gpu, run_cpu(d, bytes, 0.02f), k, case_name(d, "graph replay", seed));
        });
  }
}

// Dynamic per-tensor in one launch (clusters of 1, 2, 4 and 8 CTAs, X just inside and just
// past the fused capacity, row strides) equals the general path (LOWBIT_ACT_QUANT_FUSED=0: memset
// and two launches) and the CPU path, codes and scale bit for bit.
TEST(smxx_fp8_act_quant, per_tensor_one_launch_equals_general_path) {
  LOWBIT_REQUIRE_GPU();
  const cuda::GpuSpec& gpu = cuda::gpu_spec(0);
  const bool clusters = gpu.cc >= 90 && cuda::build_has_code_for(gpu.cc, 90);
  const int64_t cap = cuda::kActQuantFusedCtaItems * cuda::kActQuantItemElems;  // elements per CTA
  struct Shape {
    int64_t m, k, ld;
  };
  const Shape shapes[] = {{1, 16, 0},          {1, 4096, 0},         {3, 4096, 4104},       {1, cap, 0},
                          {2, cap, 0},         {5, cap / 2 + 16, 0}, {64, 4096, 0},         {7, 14336, 0},
                          {16, 14336, 14352},  {16, 16384, 0},       {17, 16384, 0},        {129, 4096, 0}};
  for (const Shape& sh : shapes)
    for (DType t : kDTypes) {
      const uint32_t seed = g_seed++;
      std::mt19937 rng(seed);
      const ActQuantDesc d = make_desc(ActQuantMode::kDynamicPerTensor, t, sh.m, sh.k, sh.ld);
      const int ctas = cuda::fp8_act_quant_fused_ctas(sh.m, sh.k, clusters);
      const std::string what = d.describe() + " fused ctas=" + std::to_string(ctas) + " seed=" + std::to_string(seed);
      SCOPED_TRACE(what);
      const std::vector<float> x = make_values(ActQuantMode::kDynamicPerTensor, t, sh.m, sh.k, Flavor::kMixed, rng);
      const int64_t ld = sh.ld == 0 ? sh.k : sh.ld;
      const std::vector<uint8_t> bytes = encode_rows(x, t, sh.m, sh.k, ld, 0.0f);
      const Quantized fused = run_gpu(d, bytes, 0.02f);
      setenv("LOWBIT_ACT_QUANT_FUSED", "0", 1);
      const Quantized general = run_gpu(d, bytes, 0.02f);
      unsetenv("LOWBIT_ACT_QUANT_FUSED");
      expect_same(fused, general, sh.k, what + " (fused vs general path)");
      expect_same(fused, run_cpu(d, bytes, 0.02f), sh.k, what + " (fused vs cpu path)");
    }
  // The rule itself: tests/cpu/test_act_quant.cpp (cuda_one_launch_per_tensor_rule).
}

// Arguments the kernel cannot take give a failed Status and launch nothing.
TEST(smxx_fp8_act_quant, argument_errors) {
  LOWBIT_REQUIRE_GPU();
  const int64_t m = 4, k = 64;
  DeviceBuffer dx(static_cast<size_t>(m * k * 2 + 64)), dq(static_cast<size_t>(m * k + 64)),
      dscales(64), dstatic(std::vector<float>{1.0f}), dws(64);
  ActQuantArgs a;
  a.x = dx.get();
  a.static_scale = dstatic.as<float>();
  a.q = dq.get();
  a.scales = dscales.as<float>();
  auto message = [&](ActQuantMode mode, const ActQuantArgs& args, void* ws) {
    return ActQuant(make_desc(mode, DType::kF16, m, k), Device::cuda(0)).run(args, ws, nullptr).message();
  };
  for (ActQuantMode mode : kModes) EXPECT_EQ(message(mode, a, dws.get()), "") << act_quant_mode_name(mode);
  ActQuantArgs b = a;
  b.x = static_cast<const char*>(a.x) + 2;
  EXPECT_NE(message(ActQuantMode::kDynamicPerToken, b, nullptr).find("x is not 16-byte aligned"), std::string::npos);
  b = a;
  b.q = static_cast<char*>(a.q) + 8;
  EXPECT_NE(message(ActQuantMode::kDynamicPerToken, b, nullptr).find("q is not 16-byte aligned"), std::string::npos);
  b = a;
  b.scales = reinterpret_cast<float*>(static_cast<char*>(dscales.get()) + 2);
  EXPECT_NE(message(ActQuantMode::kDynamicPerToken, b, nullptr).find("scales is not 4-byte aligned"),
            std::string::npos);
  b = a;
  b.static_scale = nullptr;
  EXPECT_NE(message(ActQuantMode::kStaticPerTensor, b, nullptr).find("static_scale is null"), std::string::npos);
  EXPECT_NE(message(ActQuantMode::kDynamicPerTensor, a, nullptr).find("workspace is null"), std::string::npos);
  EXPECT_NE(message(ActQuantMode::kDynamicPerTensor, a, static_cast<char*>(dws.get()) + 2)
                .find("workspace is not 4-byte aligned"),
            std::string::npos);
  ActQuantDesc d = make_desc(ActQuantMode::kDynamicPerToken, DType::kF16, m, k, 68);
  EXPECT_NE(ActQuant(d, Device::cuda(0)).can_implement().message().find("multiple of 8 on CUDA"),
            std::string::npos);
  d = make_desc(ActQuantMode::kDynamicPerToken, DType::kF16, m, k);
  const Status missing = ActQuant(d, Device::cuda(1000)).can_implement();
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.message().rfind("lowbit: ", 0), 0u) << missing.message();
  LOWBIT_CUDA_CHECK(cudaDeviceSynchronize());  // nothing launched, nothing failed
}

// The outputs are GemmArgs::a / a_scales as they come from the GPU: the CPU GEMM gives the
// same result, bit for bit, as with the host quantizer's operands.
TEST(smxx_fp8_act_quant, outputs_drive_gemm) {
  LOWBIT_REQUIRE_GPU();
  const int64_t n = 64;
  for (ActQuantMode mode : kModes)
    for (DType t : kDTypes)
      for (int64_t m : {5, 64})
        for (int64_t k : {144, 4096}) {
          const uint32_t seed = g_seed++;
          std::mt19937 rng(seed);
          const ActQuantDesc ad = make_desc(mode, t, m, k);
          SCOPED_TRACE(ad.describe() + " seed=" + std::to_string(seed));
          const std::vector<float> x = rounded(random_normal(rng, m * k), t);
          const std::vector<float> w = random_normal(rng, n * k);
          const Quantized gpu = run_gpu(ad, encode(x, t), 0.02f);

          GemmDesc gd;
          gd.m = m;
          gd.n = n;
          gd.k = k;
          gd.a = ad.act_format();
          Fp8Format wf;
          wf.scaling = mode == ActQuantMode::kDynamicBlock1x128 ? Fp8Scaling::kBlock128x128 : Fp8Scaling::kPerRow;
          gd.w = WeightFormat::fp8_format(wf);
          gd.out_dtype = DType::kBF16;
          Gemm g(gd, Device::cpu());
          ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
          const PackedWeight pw = g.pack(quantize_fp8(w.data(), n, k, wf));
          std::vector<uint8_t> ws(g.workspace_size());
          auto run = [&](const Quantized& aq) {
            std::vector<uint8_t> out(static_cast<size_t>(m * n) * 2, 0xFF);
            GemmArgs args;
            args.a = aq.q.data();
            args.a_scales = aq.scales.data();
            args.w = pw.host_view();
            args.out = out.data();
            const Status st = g.run(args, ws.data());
            EXPECT_TRUE(st.ok()) << st.message();
            return out;
          };
          const std::vector<uint8_t> out = run(gpu);
          EXPECT_EQ(out, run(host_quantizer(mode, x, m, k, 0.02f)));
          const std::vector<float> outf = decode(out, DType::kBF16, m * n);
          EXPECT_EQ(count_non_finite(outf), 0);
          EXPECT_FALSE(all_zero(outf));
        }
}

// ---------------------------------------------------------------------------------------
// In a pipeline: GEMM (bf16 out) -> ActQuant -> GEMM on one stream
// ---------------------------------------------------------------------------------------
// One fp8 layer on the GPU: packed weights uploaded, a Gemm for (m, n, k) whose activations
// have the format `a` (the ActQuant's act_format()), bf16 output.
struct GpuFp8Layer {
  GemmDesc desc;
  std::unique_ptr<Gemm> gemm;
  DeviceBuffer w, w_scales, ws;
  GpuFp8Layer(int64_t m, int64_t n, int64_t k, const ActFormat& a, Fp8Scaling ws_mode, std::mt19937& rng)
  {
    desc.m = m, desc.n = n, desc.k = k;
    desc.a = a;
    Fp8Format wf;
    wf.scaling = ws_mode;
    desc.w = WeightFormat::fp8_format(wf);
    desc.out_dtype = DType::kBF16;
    gemm = std::make_unique<Gemm>(desc, Device::cuda(0));
    EXPECT_TRUE(gemm->can_implement().ok()) << gemm->can_implement().message();
    const std::vector<float> wv = random_normal(rng, n * k);
    const PackedWeight pw = gemm->pack(quantize_fp8(wv.data(), n, k, wf));
    w = DeviceBuffer(pw.data);
    w_scales = DeviceBuffer(pw.scales);
    ws = DeviceBuffer(std::max<size_t>(gemm->workspace_size(), 1));
  }
  Status run(const void* a, const void* a_scales, void* out, cudaStream_t s) const {
    GemmArgs args;
    args.a = a;
    args.a_scales = a_scales;
    args.w = WeightView{w.get(), w_scales.get(), nullptr, nullptr};
    args.out = out;
    return gemm->run(args, ws.get(), s);
  }
};

// GEMM 1 writes X, the ActQuant reads it and writes codes and scales, GEMM 2 reads those: with
// programmatic dependent launches on sm_90 (GEMMs and ActQuant, forced on for every grid) every
// step still sees the previous one's outputs. The result equals, bit for bit, the same steps with a stream
// synchronization between them; intermediate buffers are poisoned before each run, and the
// chain is also captured in a CUDA graph and replayed. Every mode, decode and prefill m.
TEST(smxx_fp8_act_quant, pipeline_between_gemms) {
  LOWBIT_REQUIRE_GPU();
  int dev = 0, major = 0, minor = 0;
  LOWBIT_CUDA_CHECK(cudaGetDevice(&dev));
  LOWBIT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  LOWBIT_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  if (10 * major + minor < 89) GTEST_SKIP() << "the fp8 GEMMs need sm_89+";
  // Every ActQuant launch programmatic (sm_90), whatever its grid (the rule would leave m = 200
  // in stream order); the caller's setting is restored at the end.
  const ScopedEnv env_guard("LOWBIT_ACT_QUANT_PDL", "1");
  const int64_t k0 = 512, n1 = 1024, n2 = 512;
  for (ActQuantMode mode : kModes)
    for (int64_t m : {1, 16, 200}) {
      const uint32_t seed = g_seed++;
      std::mt19937 rng(seed);
      const ActQuantDesc ad = make_desc(mode, DType::kBF16, m, n1);
      SCOPED_TRACE(ad.describe() + " seed=" + std::to_string(seed));
      ActQuant aq(ad, Device::cuda(0));
      ASSERT_TRUE(aq.can_implement().ok()) << aq.can_implement().message();
      const Fp8Scaling w_mode =
          mode == ActQuantMode::kDynamicBlock1x128 ? Fp8Scaling::kBlock128x128 : Fp8Scaling::kPerRow;
      // GEMM 1's own activations: the host quantizer's codes of random x0 in the same format.
      const std::vector<float> x0 = random_normal(rng, m * k0);
      const Quantized a0 = host_quantizer(mode, x0, m, k0, 0.02f);
      const ActQuantDesc ad0 = make_desc(mode, DType::kBF16, m, k0);
      GpuFp8Layer g1(m, n1, k0, ad0.act_format(), w_mode, rng), g2(m, n2, n1, ad.act_format(), w_mode, rng);
      if (::testing::Test::HasFailure()) return;
      DeviceBuffer da0(a0.q), ds0(a0.scales), y1(static_cast<size_t>(m * n1) * 2), q1(static_cast<size_t>(m * n1)),
          s1(static_cast<size_t>(aq.scales_count()) * 4), st(std::vector<float>{0.02f}),
          aws(std::max<size_t>(aq.workspace_size(), 4)), y2(static_cast<size_t>(m * n2) * 2);
      ActQuantArgs qa;
      qa.x = y1.get();
      qa.static_scale = st.as<float>();
      qa.q = q1.get();
      qa.scales = s1.as<float>();
      StreamHolder stream;
      auto poison = [&] {
        y1.poison(stream.get());
        q1.poison(stream.get());
        s1.poison(stream.get());
        aws.poison(stream.get());
        y2.poison(stream.get());
      };
      auto chain = [&](bool sync) -> Status {
        Status s = g1.run(da0.get(), ds0.get(), y1.get(), stream.get());
        if (sync) LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        if (s.ok()) s = aq.run(qa, aws.get(), stream.get());
        if (sync) LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        if (s.ok()) s = g2.run(q1.get(), s1.get(), y2.get(), stream.get());
        return s;
      };
      poison();
      ASSERT_TRUE(chain(true).ok());
      LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      const std::vector<uint8_t> ref = y2.download();
      EXPECT_EQ(count_non_finite(decode(ref, DType::kBF16, m * n2)), 0);
      for (int rep = 0; rep < 3; ++rep) {
        poison();
        ASSERT_TRUE(chain(false).ok());
        LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        EXPECT_EQ(y2.download(), ref) << "stream run " << rep;
      }
      capture_and_replay(
          stream.get(), [&] { return chain(false); }, 2, [&](int) { poison(); },
          [&](int i) { EXPECT_EQ(y2.download(), ref) << "graph replay " << i; });
    }
}

// ---------------------------------------------------------------------------------------
// Micro benchmark (not a test: run with --gtest_also_run_disabled_tests)
// ---------------------------------------------------------------------------------------
// Median of 20 timed batches of 20 back-to-back runs, CUDA events; prints us per run and
// GB/s of the bytes one run must move (X once, codes, scales; per-tensor dynamic reads X
// twice, which the second figure counts).
TEST(smxx_fp8_act_quant, DISABLED_bandwidth) {
  LOWBIT_REQUIRE_GPU();
  struct Shape {
    int64_t m, k;
  };
  for (const Shape& s : {Shape{1, 4096}, Shape{16, 7168}, Shape{128, 7168}, Shape{4096, 7168},
                         Shape{8192, 4096}, Shape{8192, 14336}})
    for (ActQuantMode mode : kModes) {
      const DType t = DType::kBF16;
      const ActQuantDesc d = make_desc(mode, t, s.m, s.k);
      ActQuant op(d, Device::cuda(0));
      ASSERT_TRUE(op.can_implement().ok());
      DeviceBuffer dx(static_cast<size_t>(s.m * s.k * 2)), dq(static_cast<size_t>(s.m * s.k)),
          dscales(static_cast<size_t>(op.scales_count()) * 4), dstatic(std::vector<float>{0.02f}),
          dws(op.workspace_size());
      LOWBIT_CUDA_CHECK(cudaMemset(dx.get(), 0x3C, dx.bytes()));  // finite values
      StreamHolder stream;
      ActQuantArgs a;
      a.x = dx.get();
      a.static_scale = dstatic.as<float>();
      a.q = dq.get();
      a.scales = dscales.as<float>();
      cudaEvent_t start, stop;
      LOWBIT_CUDA_CHECK(cudaEventCreate(&start));
      LOWBIT_CUDA_CHECK(cudaEventCreate(&stop));
      constexpr int kRuns = 20;
      for (int i = 0; i < 5; ++i) ASSERT_TRUE(op.run(a, dws.get(), stream.get()).ok());
      std::vector<float> ms;
      for (int batch = 0; batch < 20; ++batch) {
        LOWBIT_CUDA_CHECK(cudaEventRecord(start, stream.get()));
        for (int i = 0; i < kRuns; ++i) (void)op.run(a, dws.get(), stream.get());
        LOWBIT_CUDA_CHECK(cudaEventRecord(stop, stream.get()));
        LOWBIT_CUDA_CHECK(cudaEventSynchronize(stop));
        float t_ms = 0.0f;
        LOWBIT_CUDA_CHECK(cudaEventElapsedTime(&t_ms, start, stop));
        ms.push_back(t_ms / kRuns);
      }
      std::sort(ms.begin(), ms.end());
      const double us = ms[ms.size() / 2] * 1e3;
      const double bytes = static_cast<double>(s.m * s.k) * 3 + 4.0 * static_cast<double>(op.scales_count());
      const double moved = bytes + (mode == ActQuantMode::kDynamicPerTensor ? 2.0 * s.m * s.k : 0.0);
      std::printf("act_quant %-10s m=%-5lld k=%-6lld %9.2f us %8.1f GB/s (moved %8.1f GB/s)\n",
                  act_quant_mode_name(mode), static_cast<long long>(s.m), static_cast<long long>(s.k),
                  us, bytes / us * 1e-3, moved / us * 1e-3);
      LOWBIT_CUDA_CHECK(cudaEventDestroy(start));
      LOWBIT_CUDA_CHECK(cudaEventDestroy(stop));
    }
}

// ActQuant -> fp8 GEMM pairs as an fp8 model runs them (dynamic per-token or 1x128
// activations, or dynamic per-tensor, also through its general path: LOWBIT_ACT_QUANT_FUSED=0),
// on Suite 1's layers: a CUDA graph of N pairs over rotated copies (weights and
// activations past 3x the L2, ANCHORS.md's method), median of 5 replays, us per pair; with the
// ActQuant's programmatic dependent launch off, on and by the rule (LOWBIT_ACT_QUANT_PDL = 0,
// 1, unset; read when the pair is captured), and each step alone.
TEST(smxx_fp8_act_quant, DISABLED_pipeline_pdl) {
  LOWBIT_REQUIRE_GPU();
  struct Layer {
    const char* name;
    int64_t n, k;
  };
  const Layer layers[] = {{"qkv", 6144, 4096}, {"o", 4096, 4096}, {"gate_up", 28672, 4096}, {"down", 4096, 14336}};
  int dev = 0;
  LOWBIT_CUDA_CHECK(cudaGetDevice(&dev));
  int l2 = 0;
  LOWBIT_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  for (ActQuantMode mode :
       {ActQuantMode::kDynamicPerToken, ActQuantMode::kDynamicBlock1x128, ActQuantMode::kDynamicPerTensor})
    for (int64_t m : {1, 16, 32, 64, 128}) {
      double sums[6] = {0, 0, 0, 0, 0, 0};
      for (const Layer& L : layers) {
        std::mt19937 rng(g_seed++);
        const ActQuantDesc ad = make_desc(mode, DType::kBF16, m, L.k);
        ActQuant aq(ad, Device::cuda(0));
        const Fp8Scaling w_mode =
            mode == ActQuantMode::kDynamicBlock1x128 ? Fp8Scaling::kBlock128x128 : Fp8Scaling::kPerRow;
        GpuFp8Layer g(m, L.n, L.k, ad.act_format(), w_mode, rng);
        const size_t w_bytes = static_cast<size_t>(L.n * L.k);
        const int copies = static_cast<int>(std::min<int64_t>(48, 3 * static_cast<int64_t>(l2) / static_cast<int64_t>(w_bytes) + 2));
        std::vector<DeviceBuffer> wd, wsc, xs, qs, ss, outs;
        for (int i = 0; i < copies; ++i) {
          wd.emplace_back(g.w.bytes());
          LOWBIT_CUDA_CHECK(cudaMemcpy(wd.back().get(), g.w.get(), g.w.bytes(), cudaMemcpyDeviceToDevice));
          wsc.emplace_back(g.w_scales.bytes());
          LOWBIT_CUDA_CHECK(cudaMemcpy(wsc.back().get(), g.w_scales.get(), g.w_scales.bytes(), cudaMemcpyDeviceToDevice));
          xs.emplace_back(static_cast<size_t>(m * L.k) * 2);
          LOWBIT_CUDA_CHECK(cudaMemset(xs.back().get(), 0x3C, xs.back().bytes()));
          qs.emplace_back(static_cast<size_t>(m * L.k));
          ss.emplace_back(static_cast<size_t>(aq.scales_count()) * 4);
          outs.emplace_back(static_cast<size_t>(m * L.n) * 2);
        }
        DeviceBuffer aws(4);
        StreamHolder stream;
        auto gemm_i = [&](int i) {
          GemmArgs args;
          args.a = qs[static_cast<size_t>(i)].get();
          args.a_scales = ss[static_cast<size_t>(i)].get();
          args.w = WeightView{wd[static_cast<size_t>(i)].get(), wsc[static_cast<size_t>(i)].get(), nullptr, nullptr};
          args.out = outs[static_cast<size_t>(i)].get();
          return g.gemm->run(args, g.ws.get(), stream.get());
        };
        auto quant_i = [&](int i) {
          ActQuantArgs a;
          a.x = xs[static_cast<size_t>(i)].get();
          a.q = qs[static_cast<size_t>(i)].get();
          a.scales = ss[static_cast<size_t>(i)].as<float>();
          return aq.run(a, aws.get(), stream.get());
        };
        // us per call of a graph of `calls` x enqueue(i), median of 5 replays.
        auto time_graph = [&](const std::function<Status(int)>& enqueue) {
          const int calls = std::max(copies, 64);
          cudaGraph_t graph = nullptr;
          LOWBIT_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
          Status st;
          for (int c = 0; c < calls && st.ok(); ++c) st = enqueue(c % copies);
          LOWBIT_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
          EXPECT_TRUE(st.ok()) << st.message();
          cudaGraphExec_t exec = nullptr;
          LOWBIT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
          LOWBIT_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
          cudaEvent_t e0, e1;
          LOWBIT_CUDA_CHECK(cudaEventCreate(&e0));
          LOWBIT_CUDA_CHECK(cudaEventCreate(&e1));
          std::vector<float> us;
          for (int r = 0; r < 5; ++r) {
            LOWBIT_CUDA_CHECK(cudaEventRecord(e0, stream.get()));
            LOWBIT_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
            LOWBIT_CUDA_CHECK(cudaEventRecord(e1, stream.get()));
            LOWBIT_CUDA_CHECK(cudaEventSynchronize(e1));
            float ms = 0;
            LOWBIT_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
            us.push_back(ms * 1e3f / static_cast<float>(calls));
          }
          LOWBIT_CUDA_CHECK(cudaEventDestroy(e0));
          LOWBIT_CUDA_CHECK(cudaEventDestroy(e1));
          LOWBIT_CUDA_CHECK(cudaGraphExecDestroy(exec));
          LOWBIT_CUDA_CHECK(cudaGraphDestroy(graph));
          std::sort(us.begin(), us.end());
          return static_cast<double>(us[2]);
        };
        const char* old = std::getenv("LOWBIT_ACT_QUANT_PDL");
        const std::string saved = old != nullptr ? old : "";
        setenv("LOWBIT_ACT_QUANT_PDL", "0", 1);
        const double off = time_graph([&](int i) {
          Status st = quant_i(i);
          return st.ok() ? gemm_i(i) : st;
        });
        const double quant_alone = time_graph(quant_i);
        setenv("LOWBIT_ACT_QUANT_PDL", "1", 1);
        const double on = time_graph([&](int i) {
          Status st = quant_i(i);
          return st.ok() ? gemm_i(i) : st;
        });
        unsetenv("LOWBIT_ACT_QUANT_PDL");
        const double rule = time_graph([&](int i) {
          Status st = quant_i(i);
          return st.ok() ? gemm_i(i) : st;
        });
        if (old != nullptr) setenv("LOWBIT_ACT_QUANT_PDL", saved.c_str(), 1);
        // Dynamic per-tensor: the general path (memset + two launches) for comparison.
        double general = 0;
        if (mode == ActQuantMode::kDynamicPerTensor) {
          setenv("LOWBIT_ACT_QUANT_FUSED", "0", 1);
          general = time_graph([&](int i) {
            Status st = quant_i(i);
            return st.ok() ? gemm_i(i) : st;
          });
          unsetenv("LOWBIT_ACT_QUANT_FUSED");
        }
        const double gemm_alone = time_graph(gemm_i);
        std::printf("pair %-9s m=%-4lld %-8s quant+gemm PDL off %7.2f  on %7.2f  rule %7.2f  general %7.2f  | quant %6.2f  gemm %7.2f us  (%s)\n",
                    act_quant_mode_name(mode), static_cast<long long>(m), L.name, off, on, rule, general, quant_alone,
                    gemm_alone, g.gemm->kernel_name().c_str());
        sums[0] += off, sums[1] += on, sums[2] += quant_alone, sums[3] += gemm_alone, sums[4] += rule, sums[5] += general;
      }
      std::printf("pair %-9s m=%-4lld SUITE1   quant+gemm PDL off %7.2f  on %7.2f  rule %7.2f  general %7.2f  | quant %6.2f  gemm %7.2f us\n",
                  act_quant_mode_name(mode), static_cast<long long>(m), sums[0], sums[1], sums[4], sums[5], sums[2], sums[3]);
    }
}

// =======================================================================================
// int8 per token (smxx_int8_act_quant)
// =======================================================================================
// One int8 case: the GPU run twice (code poisons 0xFF and 0x00: both agree, so every code was
// written), against the CPU path and, on finite input, quantize_int8(); zero points in range.
void check_int8_case(const ActQuantDesc& d, const std::vector<float>& x, const std::vector<uint8_t>& bytes,
                     const std::string& what, bool finite = true) {
  SCOPED_TRACE(what);
  const Quantized gpu = run_gpu(d, bytes, 1.0f, false, 0xFF);
  expect_same(run_gpu(d, bytes, 1.0f, false, 0x00), gpu, d.k, what + " (code poison 0x00 vs 0xFF)");
  for (int32_t z : gpu.zeros) ASSERT_TRUE(z >= -128 && z <= 127) << what << ": zero point " << z;
  for (float s : gpu.scales) ASSERT_FALSE(std::isnan(s)) << what << ": NaN scale";
  expect_same(gpu, run_cpu(d, bytes, 1.0f), d.k, what + " (gpu vs cpu path)");
  if (finite) expect_same(gpu, int8_host_quantizer(d.mode, x, d.m, d.k), d.k, what + " (gpu vs quantize_int8)");
}

// The int8 quantizer's outputs as a GEMM read them: codes, m scales and (zero point) m zeros.
Quantized download_int8(const DeviceBuffer& dq, const DeviceBuffer& ds, const DeviceBuffer& dz, int64_t m,
                        bool zero_point) {
  Quantized gpu;
  gpu.q = dq.download();
  const std::vector<uint8_t> sraw = ds.download();
  gpu.scales.resize(static_cast<size_t>(m));
  std::memcpy(gpu.scales.data(), sraw.data(), sraw.size());
  if (zero_point) {
    const std::vector<uint8_t> zraw = dz.download();
    gpu.zeros.resize(static_cast<size_t>(m));
    std::memcpy(gpu.zeros.data(), zraw.data(), zraw.size());
  }
  return gpu;
}

void int8_sweep(ActQuantMode mode, DType t) {
  LOWBIT_REQUIRE_GPU();
  for (int64_t m : {1, 3, 64, 1000})
    for (int64_t k : {16, 4096, 14336, 40000}) {
      if (small_mode() && m * k > 300000) continue;  // compute-sanitizer runs
      const uint32_t seed = g_seed++;
      std::mt19937 rng(seed);
      const ActQuantDesc d = make_desc(mode, t, m, k);
      const std::vector<float> x = make_int8_values(mode, t, m, k, rng);
      check_int8_case(d, x, encode_rows(x, t, m, k, k, 0.0f), case_name(d, "int8 rows", seed));
      if (::testing::Test::HasFatalFailure()) return;
    }
}

TEST(smxx_int8_act_quant, per_token_f16) { int8_sweep(ActQuantMode::kInt8PerToken, DType::kF16); }
TEST(smxx_int8_act_quant, per_token_bf16) { int8_sweep(ActQuantMode::kInt8PerToken, DType::kBF16); }
TEST(smxx_int8_act_quant, per_token_zp_f16) { int8_sweep(ActQuantMode::kInt8PerTokenZeroPoint, DType::kF16); }
TEST(smxx_int8_act_quant, per_token_zp_bf16) { int8_sweep(ActQuantMode::kInt8PerTokenZeroPoint, DType::kBF16); }

// Rows of X `ld` elements apart with huge garbage in the gaps: only the k columns are read.
TEST(smxx_int8_act_quant, row_stride) {
  LOWBIT_REQUIRE_GPU();
  for (ActQuantMode mode : kInt8Modes)
    for (DType t : kDTypes)
      for (int64_t k : {16, 144, 4096, 40000})
        for (int64_t pad : {8, 24})
          for (int64_t m : {3, 64}) {
            const int64_t ld = k + pad;
            const uint32_t seed = g_seed++;
            std::mt19937 rng(seed);
            const std::vector<float> x = make_int8_values(mode, t, m, k, rng);
            const ActQuantDesc d = make_desc(mode, t, m, k, ld);
            check_int8_case(d, x, encode_rows(x, t, m, k, ld, 30000.0f), case_name(d, "int8 rows", seed));
          }
}

// NaN and +-inf inputs: the documented rules (act_quant.hpp), the same on both devices: raw
// 16-bit NaNs (quiet, signalling, both signs) and infinities at random places of rows 1..5
// (row 5 NaN only), rows 0 and 6 finite; and a row of NaN only.
TEST(smxx_int8_act_quant, non_finite_inputs) {
  LOWBIT_REQUIRE_GPU();
  for (ActQuantMode mode : kInt8Modes)
    for (DType t : kDTypes)
      for (int64_t k : {16, 144, 4096, 40000}) {
        const int64_t m = 8;
        const uint32_t seed = g_seed++;
        std::mt19937 rng(seed);
        const std::vector<float> x = make_int8_values(mode, t, m, k, rng);
        std::vector<uint8_t> bytes = encode_rows(x, t, m, k, k, 0.0f);
        const std::vector<uint16_t> specials =
            t == DType::kF16 ? std::vector<uint16_t>{0x7E00, 0xFE00, 0x7C01, 0xFC01, 0x7C00, 0xFC00}
                             : std::vector<uint16_t>{0x7FC0, 0xFFC0, 0x7F81, 0xFF81, 0x7F80, 0xFF80};
        std::uniform_int_distribution<int64_t> col(0, k - 1);
        for (int64_t r = 1; r <= 5; ++r)
          for (int i = 0; i < 3; ++i) {
            const uint16_t h = specials[static_cast<size_t>((r + i) % (r == 5 ? 4 : 6))];
            std::memcpy(bytes.data() + 2 * (r * k + col(rng)), &h, 2);
          }
        for (int64_t c = 0; c < k; ++c)  // row 7: NaN only
          std::memcpy(bytes.data() + 2 * (7 * k + c), &specials[static_cast<size_t>(c % 4)], 2);
        const ActQuantDesc d = make_desc(mode, t, m, k);
        check_int8_case(d, x, bytes, case_name(d, "int8 non-finite", seed), /*finite=*/false);
      }
}

// run() is stream-ordered work only: captured in a CUDA graph and replayed (twice, with new
// input between), it gives the CPU path's result.
TEST(smxx_int8_act_quant, graph_capture) {
  LOWBIT_REQUIRE_GPU();
  for (ActQuantMode mode : kInt8Modes) {
    const DType t = DType::kBF16;
    const int64_t m = 33, k = 1040;
    const ActQuantDesc d = make_desc(mode, t, m, k);
    ActQuant op(d, Device::cuda(0));
    ASSERT_TRUE(op.can_implement().ok()) << op.can_implement().message();
    DeviceBuffer dx(static_cast<size_t>(m * k * 2)), dq(static_cast<size_t>(m * k)),
        dscales(static_cast<size_t>(op.scales_count()) * 4), dzeros(static_cast<size_t>(m) * 4);
    StreamHolder stream;
    ActQuantArgs a;
    a.x = dx.get();
    a.q = dq.get();
    a.scales = dscales.as<float>();
    a.zeros = dzeros.as<int32_t>();
    uint32_t seed = 0;
    std::vector<uint8_t> bytes;
    capture_and_replay(
        stream.get(), [&] { return op.run(a, nullptr, stream.get()); }, 2,
        [&](int) {  // a new input for every replay
          seed = g_seed++;
          std::mt19937 rng(seed);
          const std::vector<float> x = make_int8_values(mode, t, m, k, rng);
          bytes = encode_rows(x, t, m, k, k, 0.0f);
          dx.upload(bytes.data(), bytes.size());
          dq.poison(stream.get());
          dscales.poison(stream.get());
          LOWBIT_CUDA_CHECK(cudaMemsetAsync(dzeros.get(), kZerosPoisonByte, dzeros.bytes(), stream.get()));
        },
        [&](int) {
          const Quantized gpu = download_int8(dq, dscales, dzeros, m, mode == ActQuantMode::kInt8PerTokenZeroPoint);
          expect_same(gpu, run_cpu(d, bytes, 1.0f), k, case_name(d, "graph replay", seed));
        });
  }
}

// Arguments the kernel cannot take give a failed Status and launch nothing.
TEST(smxx_int8_act_quant, argument_errors) {
  LOWBIT_REQUIRE_GPU();
  const int64_t m = 4, k = 64;
  DeviceBuffer dx(static_cast<size_t>(m * k * 2 + 64)), dq(static_cast<size_t>(m * k + 64)), dscales(64),
      dzeros(64);
  ActQuantArgs a;
  a.x = dx.get();
  a.q = dq.get();
  a.scales = dscales.as<float>();
  a.zeros = dzeros.as<int32_t>();
  auto message = [&](ActQuantMode mode, const ActQuantArgs& args) {
    return ActQuant(make_desc(mode, DType::kF16, m, k), Device::cuda(0)).run(args, nullptr, nullptr).message();
  };
  for (ActQuantMode mode : kInt8Modes) {
    EXPECT_EQ(message(mode, a), "") << act_quant_mode_name(mode);
    ActQuantArgs b = a;
    b.x = static_cast<const char*>(a.x) + 2;
    EXPECT_NE(message(mode, b).find("x is not 16-byte aligned"), std::string::npos);
    b = a;
    b.q = static_cast<char*>(a.q) + 8;
    EXPECT_NE(message(mode, b).find("q is not 16-byte aligned"), std::string::npos);
    b = a;
    b.scales = reinterpret_cast<float*>(static_cast<char*>(dscales.get()) + 2);
    EXPECT_NE(message(mode, b).find("scales is not 4-byte aligned"), std::string::npos);
  }
  ActQuantArgs b = a;
  b.zeros = nullptr;
  EXPECT_NE(message(ActQuantMode::kInt8PerTokenZeroPoint, b).find("zeros is null"), std::string::npos);
  EXPECT_EQ(message(ActQuantMode::kInt8PerToken, b), "");  // symmetric: zeros unused
  b = a;
  b.zeros = reinterpret_cast<int32_t*>(static_cast<char*>(dzeros.get()) + 2);
  EXPECT_NE(message(ActQuantMode::kInt8PerTokenZeroPoint, b).find("zeros is not 4-byte aligned"), std::string::npos);
  EXPECT_EQ(message(ActQuantMode::kInt8PerToken, b), "");
  const ActQuantDesc d = make_desc(ActQuantMode::kInt8PerTokenZeroPoint, DType::kF16, m, k, 68);
  EXPECT_NE(ActQuant(d, Device::cuda(0)).can_implement().message().find("multiple of 8 on CUDA"), std::string::npos);
  LOWBIT_CUDA_CHECK(cudaDeviceSynchronize());  // nothing launched, nothing failed
}

// ---------------------------------------------------------------------------------------
// int8 activations into sm90_int8_gemm
// ---------------------------------------------------------------------------------------
bool int8_gemm_gpu() {
  const std::vector<GpuInfo> gpus = list_gpus();
  return !gpus.empty() && gpus[0].cc() == 90;
}

// One int8 W8A8 layer on the GPU (sm90_int8_gemm): packed weights uploaded, a Gemm for
// (m, n, k) whose activations have the format `a` (the ActQuant's act_format()), bf16 output.
struct GpuInt8Layer {
  GemmDesc desc;
  std::unique_ptr<Gemm> gemm;
  Int8Tensor qw;
  PackedWeight pw;
  DeviceBuffer w, w_scales, w_zeros, ws;
  GpuInt8Layer(int64_t m, int64_t n, int64_t k, const ActFormat& a, std::mt19937& rng) {
    desc.m = m, desc.n = n, desc.k = k;
    desc.a = a;
    desc.w = WeightFormat::int8();
    desc.out_dtype = DType::kBF16;
    GemmOptions opt;
    opt.family = "sm90_int8_gemm";
    gemm = std::make_unique<Gemm>(desc, Device::cuda(0), opt);
    EXPECT_TRUE(gemm->can_implement().ok()) << gemm->can_implement().message();
    const std::vector<float> wv = random_normal(rng, n * k, 0.05f);
    qw = quantize_int8(wv.data(), n, k, false);
    pw = gemm->pack(qw);
    w = DeviceBuffer(pw.data);
    w_scales = DeviceBuffer(pw.scales);
    w_zeros = DeviceBuffer(pw.zeros);
    ws = DeviceBuffer(std::max<size_t>(gemm->workspace_size(), 1));
  }
  Status run(const void* a, const void* a_scales, const void* a_zeros, void* out, cudaStream_t s) const {
    GemmArgs args;
    args.a = a;
    args.a_scales = a_scales;
    args.a_zeros = desc.a.int8_zero_point ? a_zeros : nullptr;
    args.w = WeightView{w.get(), w_scales.get(), w_zeros.get(), nullptr};
    args.out = out;
    return gemm->run(args, ws.get(), s);
  }
  // The CPU Gemm on the same (host) codes: bf16 output bytes.
  std::vector<uint8_t> run_cpu_gemm(const Quantized& aq) const {
    Gemm g(desc, Device::cpu());
    EXPECT_TRUE(g.can_implement().ok()) << g.can_implement().message();
    const PackedWeight cw = g.pack(qw);
    std::vector<uint8_t> out(static_cast<size_t>(desc.m * desc.n) * 2, 0xFF), work(g.workspace_size());
    GemmArgs args;
    args.a = aq.q.data();
    args.a_scales = aq.scales.data();
    args.a_zeros = desc.a.int8_zero_point ? aq.zeros.data() : nullptr;
    args.w = cw.host_view();
    args.out = out.data();
    const Status st = g.run(args, work.data());
    EXPECT_TRUE(st.ok()) << st.message();
    return out;
  }
};

// `out`, the GEMM's output on the GPU quantizer's codes `gpu`: the same bytes as the GEMM on
// the reference quantizer's codes `host` (`host_name` in messages), and within 8e-3 of the
// CPU Gemm on the same codes; finite, and not all zero when `require_nonzero`.
void expect_gemm_on_codes(GpuInt8Layer& layer, const Quantized& gpu, const Quantized& host,
                          const std::vector<uint8_t>& out, int64_t m, int64_t n, cudaStream_t stream,
                          const std::string& host_name, bool require_nonzero) {
  DeviceBuffer hq(host.q), hs(host.scales), hz(host.zeros.empty() ? std::vector<int32_t>(1) : host.zeros),
      hout(static_cast<size_t>(m * n) * 2);
  hout.poison(stream);
  ASSERT_TRUE(layer.run(hq.get(), hs.get(), hz.get(), hout.get(), stream).ok());
  LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_EQ(out, hout.download()) << "GEMM on ActQuant's outputs vs on " << host_name;
  const std::vector<float> got = decode(out, DType::kBF16, m * n);
  const std::vector<float> want = decode(layer.run_cpu_gemm(gpu), DType::kBF16, m * n);
  EXPECT_EQ(count_non_finite(got), 0);
  if (require_nonzero) EXPECT_FALSE(all_zero(got));
  EXPECT_LE(relative_error(got.data(), want.data(), m * n), 8e-3) << "relative error vs the CPU Gemm on the same codes";
}

// ActQuant (int8 mode) then sm90_int8_gemm on one stream, no synchronization between: the
// quantizer's codes, scales and zero points equal the CPU path's; the GEMM's output equals,
// bit for bit, the same GEMM on quantize_int8()'s operands uploaded (same codes), and is
// within the bf16 output rounding of the CPU Gemm on the same codes (int8_gemm_common.hpp:
// the GPU scales the exact int32 sum, the CPU GEMM sums dequantized fp32 values).
TEST(smxx_int8_act_quant, outputs_drive_sm90_int8_gemm) {
  LOWBIT_REQUIRE_GPU();
  if (!int8_gemm_gpu()) GTEST_SKIP() << "sm90_int8_gemm needs sm_90 (the quantizer itself is tested above)";
  const int64_t n = 256;
  for (ActQuantMode mode : kInt8Modes)
    for (DType t : kDTypes)
      for (int64_t m : {1, 5, 64, 200})
        for (int64_t k : {16, 4096}) {
          const uint32_t seed = g_seed++;
          std::mt19937 rng(seed);
          const ActQuantDesc ad = make_desc(mode, t, m, k);
          SCOPED_TRACE(ad.describe() + " seed=" + std::to_string(seed));
          std::vector<float> x = random_normal(rng, m * k);
          for (int64_t r = 0; r < m; ++r)  // shifted rows: zero points away from the middle
            for (int64_t c = 0; c < k; ++c) x[static_cast<size_t>(r * k + c)] += static_cast<float>(r % 3) - 1.0f;
          x = rounded(x, t);
          GpuInt8Layer layer(m, n, k, ad.act_format(), rng);
          ActQuant aq(ad, Device::cuda(0));
          ASSERT_TRUE(aq.can_implement().ok()) << aq.can_implement().message();
          if (::testing::Test::HasFailure()) return;
          DeviceBuffer dx(encode(x, t)), dq(static_cast<size_t>(m * k)), ds(static_cast<size_t>(m) * 4),
              dz(static_cast<size_t>(m) * 4), dout(static_cast<size_t>(m * n) * 2);
          StreamHolder stream;
          dq.poison(stream.get());
          ds.poison(stream.get());
          dz.poison(stream.get());
          dout.poison(stream.get());
          ActQuantArgs qa;
          qa.x = dx.get();
          qa.q = dq.get();
          qa.scales = ds.as<float>();
          qa.zeros = dz.as<int32_t>();
          ASSERT_TRUE(aq.run(qa, nullptr, stream.get()).ok());
          const Status gs = layer.run(dq.get(), ds.get(), dz.get(), dout.get(), stream.get());
          ASSERT_TRUE(gs.ok()) << gs.message();
          stream.sync();
          const Quantized gpu = download_int8(dq, ds, dz, m, mode == ActQuantMode::kInt8PerTokenZeroPoint);
          const Quantized host = int8_host_quantizer(mode, x, m, k);
          expect_same(gpu, host, k, ad.describe() + " (gpu vs quantize_int8)");
          expect_gemm_on_codes(layer, gpu, host, dout.download(), m, n, stream.get(), "quantize_int8()'s", true);
        }
}

// GEMM 1 (int8, bf16 out) writes X, the int8 ActQuant reads it and writes codes, scales and
// zero points, GEMM 2 reads those: with every ActQuant launch programmatic (sm_90,
// LOWBIT_ACT_QUANT_PDL=1) each step still sees the previous one's outputs. The result equals,
// bit for bit, the same steps with a stream synchronization between them, in stream order and
// replayed from a CUDA graph; intermediate buffers poisoned before each run.
TEST(smxx_int8_act_quant, pipeline_between_int8_gemms) {
  LOWBIT_REQUIRE_GPU();
  if (!int8_gemm_gpu()) GTEST_SKIP() << "sm90_int8_gemm needs sm_90";
  const ScopedEnv env_guard("LOWBIT_ACT_QUANT_PDL", "1");
  const int64_t k0 = 512, n1 = 1024, n2 = 512;
  for (ActQuantMode mode : kInt8Modes)
    for (int64_t m : {1, 16, 200}) {
      const uint32_t seed = g_seed++;
      std::mt19937 rng(seed);
      const ActQuantDesc ad = make_desc(mode, DType::kBF16, m, n1);
      SCOPED_TRACE(ad.describe() + " seed=" + std::to_string(seed));
      ActQuant aq(ad, Device::cuda(0));
      ASSERT_TRUE(aq.can_implement().ok()) << aq.can_implement().message();
      // GEMM 1's own activations: quantize_int8() of random x0 in the same mode.
      const std::vector<float> x0 = random_normal(rng, m * k0);
      const Quantized a0 = int8_host_quantizer(mode, x0, m, k0);
      const ActQuantDesc ad0 = make_desc(mode, DType::kBF16, m, k0);
      GpuInt8Layer g1(m, n1, k0, ad0.act_format(), rng), g2(m, n2, n1, ad.act_format(), rng);
      if (::testing::Test::HasFailure()) return;
      DeviceBuffer da0(a0.q), ds0(a0.scales), dz0(a0.zeros.empty() ? std::vector<int32_t>(1) : a0.zeros),
          y1(static_cast<size_t>(m * n1) * 2), q1(static_cast<size_t>(m * n1)), s1(static_cast<size_t>(m) * 4),
          z1(static_cast<size_t>(m) * 4), y2(static_cast<size_t>(m * n2) * 2);
      ActQuantArgs qa;
      qa.x = y1.get();
      qa.q = q1.get();
      qa.scales = s1.as<float>();
      qa.zeros = z1.as<int32_t>();
      StreamHolder stream;
      auto poison = [&] {
        y1.poison(stream.get());
        q1.poison(stream.get());
        s1.poison(stream.get());
        z1.poison(stream.get());
        y2.poison(stream.get());
      };
      auto chain = [&](bool sync) -> Status {
        Status s = g1.run(da0.get(), ds0.get(), dz0.get(), y1.get(), stream.get());
        if (sync) LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        if (s.ok()) s = aq.run(qa, nullptr, stream.get());
        if (sync) LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        if (s.ok()) s = g2.run(q1.get(), s1.get(), z1.get(), y2.get(), stream.get());
        return s;
      };
      poison();
      ASSERT_TRUE(chain(true).ok());
      LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      const std::vector<uint8_t> ref = y2.download();
      EXPECT_EQ(count_non_finite(decode(ref, DType::kBF16, m * n2)), 0);
      EXPECT_FALSE(all_zero(decode(ref, DType::kBF16, m * n2)));
      for (int rep = 0; rep < 3; ++rep) {
        poison();
        ASSERT_TRUE(chain(false).ok());
        LOWBIT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        EXPECT_EQ(y2.download(), ref) << "stream run " << rep;
      }
      capture_and_replay(
          stream.get(), [&] { return chain(false); }, 2, [&](int) { poison(); },
          [&](int i) { EXPECT_EQ(y2.download(), ref) << "graph replay " << i; });
    }
}


// =======================================================================================
// int8 static per tensor (smxx_int8_act_quant, static instance)
// =======================================================================================
std::string static_case_name(const ActQuantDesc& d, float s, int32_t z, uint32_t seed) {
  std::ostringstream o;
  o << d.describe() << " s=" << s;
  if (d.int8_zero_point) o << " z=" << z;
  o << " seed=" << seed;
  return o.str();
}

// One int8-static case: the GPU run twice (code poisons 0xFF and 0x00: both agree, so every code
// was written), against the CPU path (itself checked against an independent recomputation in
// tests/cpu/test_act_quant.cpp).
void check_int8_static_case(const ActQuantDesc& d, const std::vector<uint8_t>& bytes, float s, int32_t z,
                            const std::string& what) {
  SCOPED_TRACE(what);
  const Quantized gpu = run_gpu(d, bytes, s, false, 0xFF, z);
  expect_same(run_gpu(d, bytes, s, false, 0x00, z), gpu, d.k, what + " (code poison 0x00 vs 0xFF)");
  expect_same(gpu, run_cpu(d, bytes, s, 0xFF, z), d.k, what + " (gpu vs cpu path)");
}

// Every (s, z) of the tables, cycled over m x k (so each shape meets several); m = 64 also with
// a row stride (garbage in the gaps).
void int8_static_sweep(DType t, bool zero_point) {
  LOWBIT_REQUIRE_GPU();
  size_t i = 0;
  for (int64_t m : {1, 3, 64, 1000})
    for (int64_t k : {16, 4096, 14336})
      for (int rep = 0; rep < 3; ++rep, ++i) {
        if (small_mode() && m * k > 300000) continue;  // compute-sanitizer runs
        const float s = kInt8StaticScales[i % std::size(kInt8StaticScales)];
        const int32_t z = zero_point ? kInt8StaticZeros[i % std::size(kInt8StaticZeros)] : 0;
        const int64_t ld = m == 64 && rep == 2 ? k + 8 : 0;
        const uint32_t seed = g_seed++;
        std::mt19937 rng(seed);
        const ActQuantDesc d = make_int8_static_desc(t, m, k, zero_point, ld);
        const std::vector<float> x = make_int8_static_values(t, m, k, s, rng);
        check_int8_static_case(d, encode_rows(x, t, m, k, ld == 0 ? k : ld, 30000.0f), s, z,
                               static_case_name(d, s, z, seed));
        if (::testing::Test::HasFatalFailure()) return;
      }
}

TEST(smxx_int8_act_quant, static_f16) { int8_static_sweep(DType::kF16, false); }
TEST(smxx_int8_act_quant, static_bf16) { int8_static_sweep(DType::kBF16, false); }
TEST(smxx_int8_act_quant, static_zp_f16) { int8_static_sweep(DType::kF16, true); }
TEST(smxx_int8_act_quant, static_zp_bf16) { int8_static_sweep(DType::kBF16, true); }

// NaN and +-inf inputs (raw 16-bit NaNs of both signs, quiet and signalling, and infinities at
// random places), and the parameters nobody checks (s = +-0, < 0, +-inf, NaN, subnormal; z out
// of [-128, 127]): the GPU gives the CPU path's result (act_quant.hpp's formulas) bit for bit.
TEST(smxx_int8_act_quant, static_non_finite_and_unchecked_parameters) {
  LOWBIT_REQUIRE_GPU();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
  for (DType t : kDTypes)
    for (bool zp : {false, true})
      for (int64_t k : {16, 4096}) {
        const int64_t m = 8;
        const uint32_t seed = g_seed++;
        std::mt19937 rng(seed);
        const std::vector<float> x = make_int8_static_values(t, m, k, 0.02f, rng);
        std::vector<uint8_t> bytes = encode_rows(x, t, m, k, k, 0.0f);
        const std::vector<uint16_t> specials =
            t == DType::kF16 ? std::vector<uint16_t>{0x7E00, 0xFE00, 0x7C01, 0xFC01, 0x7C00, 0xFC00}
                             : std::vector<uint16_t>{0x7FC0, 0xFFC0, 0x7F81, 0xFF81, 0x7F80, 0xFF80};
        std::uniform_int_distribution<int64_t> col(0, k - 1);
        for (int64_t r = 0; r < m; ++r)
          for (int i = 0; i < 4; ++i)
            std::memcpy(bytes.data() + 2 * (r * k + col(rng)), &specials[static_cast<size_t>((r + i) % 6)], 2);
        const ActQuantDesc d = make_int8_static_desc(t, m, k, zp);
        for (float s : {0.02f, 0.0f, -0.0f, -0.5f, inf, -inf, nan, 1e-40f})
          for (int32_t z : zp ? std::vector<int32_t>{-3, 1000, (1 << 24) + 1} : std::vector<int32_t>{0}) {
            check_int8_static_case(d, bytes, s, z, static_case_name(d, s, z, seed));
            if (::testing::Test::HasFatalFailure()) return;
          }
      }
}

// run() is stream-ordered work only: captured in a CUDA graph and replayed (twice, with new
// input AND new s, z written to their device words between replays: read at run time, not
// baked into the graph), it gives the CPU path's result.
TEST(smxx_int8_act_quant, static_graph_capture) {
  LOWBIT_REQUIRE_GPU();
  for (bool zp : {false, true}) {
    const DType t = DType::kBF16;
    const int64_t m = 33, k = 1040;
    const ActQuantDesc d = make_int8_static_desc(t, m, k, zp);
    ActQuant op(d, Device::cuda(0));
    ASSERT_TRUE(op.can_implement().ok()) << op.can_implement().message();
    DeviceBuffer dx(static_cast<size_t>(m * k * 2)), dq(static_cast<size_t>(m * k)),
        dscales(static_cast<size_t>(op.scales_count()) * 4), dzeros(static_cast<size_t>(m) * 4),
        ds(std::vector<float>{1.0f}), dz(std::vector<int32_t>{0});
    StreamHolder stream;
    ActQuantArgs a;
    a.x = dx.get();
    a.q = dq.get();
    a.scales = dscales.as<float>();
    a.zeros = dzeros.as<int32_t>();
    a.static_scale = ds.as<float>();
    a.static_zero_point = zp ? dz.as<int32_t>() : nullptr;
    uint32_t seed = 0;
    float s = 0.0f;
    int32_t z = 0;
    std::vector<uint8_t> bytes;
    capture_and_replay(
        stream.get(), [&] { return op.run(a, nullptr, stream.get()); }, 2,
        [&](int i) {  // a new input, scale and zero point for every replay
          seed = g_seed++;
          std::mt19937 rng(seed);
          s = i == 0 ? 0.02f : 3.7e-3f;
          z = zp ? (i == 0 ? -3 : 100) : 0;
          const std::vector<float> x = make_int8_static_values(t, m, k, s, rng);
          bytes = encode_rows(x, t, m, k, k, 0.0f);
          dx.upload(bytes.data(), bytes.size());
          ds.upload(&s, sizeof s);
          dz.upload(&z, sizeof z);
          dq.poison(stream.get());
          dscales.poison(stream.get());
          LOWBIT_CUDA_CHECK(cudaMemsetAsync(dzeros.get(), kZerosPoisonByte, dzeros.bytes(), stream.get()));
        },
        [&](int) {
          const Quantized gpu = download_int8(dq, dscales, dzeros, m, zp);
          expect_same(gpu, run_cpu(d, bytes, s, 0xFF, z), k, static_case_name(d, s, z, seed) + " (graph replay)");
        });
  }
}

// Arguments the kernel cannot take give a failed Status and launch nothing.
TEST(smxx_int8_act_quant, static_argument_errors) {
  LOWBIT_REQUIRE_GPU();
  const int64_t m = 4, k = 64;
  DeviceBuffer dx(static_cast<size_t>(m * k * 2 + 64)), dq(static_cast<size_t>(m * k + 64)), dscales(64), dzeros(64),
      ds(std::vector<float>{0.5f, 0.5f}), dz(std::vector<int32_t>{1, 1});
  ActQuantArgs a;
  a.x = dx.get();
  a.q = dq.get();
  a.scales = dscales.as<float>();
  a.zeros = dzeros.as<int32_t>();
  a.static_scale = ds.as<float>();
  a.static_zero_point = dz.as<int32_t>();
  const ActQuant sym(make_int8_static_desc(DType::kF16, m, k, false), Device::cuda(0));
  const ActQuant zp(make_int8_static_desc(DType::kF16, m, k, true), Device::cuda(0));
  ASSERT_TRUE(zp.can_implement().ok()) << zp.can_implement().message();
  EXPECT_EQ(zp.kernel_name(), "smxx_int8_act_quant");
  auto message = [](const ActQuant& op, const ActQuantArgs& args) { return op.run(args, nullptr, nullptr).message(); };
  EXPECT_EQ(message(zp, a), "");
  ActQuantArgs b = a;
  b.static_zero_point = reinterpret_cast<const int32_t*>(static_cast<const char*>(dz.get()) + 2);
  EXPECT_NE(message(zp, b).find("static_zero_point is not 4-byte aligned"), std::string::npos) << message(zp, b);
  b = a;
  b.static_scale = reinterpret_cast<const float*>(static_cast<const char*>(ds.get()) + 2);
  EXPECT_NE(message(zp, b).find("static_scale is not 4-byte aligned"), std::string::npos);
  b = a;
  b.static_scale = nullptr;
  EXPECT_NE(message(sym, b).find("static_scale is null"), std::string::npos);
  b = a;
  b.static_zero_point = nullptr;
  EXPECT_NE(message(zp, b).find("static_zero_point is null"), std::string::npos);
  EXPECT_EQ(message(sym, b), "");
  EXPECT_NE(message(sym, a).find("static_zero_point is given, but ActQuantDesc::int8_zero_point is off"),
            std::string::npos);
  b = a;
  b.static_scale = dscales.as<float>() + 2;
  EXPECT_NE(message(zp, b).find("overlaps static_scale"), std::string::npos);
  b = a;
  b.static_zero_point = dzeros.as<int32_t>() + 3;
  EXPECT_NE(message(zp, b).find("overlaps static_zero_point"), std::string::npos);
  b = a;
  b.zeros = reinterpret_cast<int32_t*>(static_cast<char*>(dzeros.get()) + 2);
  EXPECT_NE(message(zp, b).find("zeros is not 4-byte aligned"), std::string::npos);
  LOWBIT_CUDA_CHECK(cudaDeviceSynchronize());  // nothing launched, nothing failed
}

// ActQuant (int8-static) then sm90_int8_gemm on one stream, no synchronization between: the
// quantizer's codes, scales and zero points equal the CPU path's; the GEMM's output equals, bit
// for bit, the same GEMM on the CPU path's operands uploaded, and is within the bf16 output
// rounding of the CPU Gemm on the same codes. s and z calibrated to the data, as a
// checkpoint's input_scale / input_zero_point are, and, for z, also the table's extremes.
TEST(smxx_int8_act_quant, static_outputs_drive_sm90_int8_gemm) {
  LOWBIT_REQUIRE_GPU();
  if (!int8_gemm_gpu()) GTEST_SKIP() << "sm90_int8_gemm needs sm_90 (the quantizer itself is tested above)";
  const int64_t n = 256;
  for (int zi = -2; zi < static_cast<int>(std::size(kInt8StaticZeros)); ++zi)  // -2: none, -1: calibrated
    for (DType t : kDTypes)
      for (int64_t m : {1, 5, 64, 200})
        for (int64_t k : {16, 4096}) {
          const uint32_t seed = g_seed++;
          std::mt19937 rng(seed);
          const bool zp = zi >= -1;
          std::vector<float> x = random_normal(rng, m * k);
          for (float& v : x) v += 0.75f;  // shifted: a calibrated zero point away from 0
          x = rounded(x, t);
          const auto [lo_it, hi_it] = std::minmax_element(x.begin(), x.end());
          const float lo = std::min(*lo_it, 0.0f), hi = std::max(*hi_it, 0.0f);
          const float s = zp ? (hi - lo) / 255.0f : std::max(-lo, hi) / 127.0f;
          const int32_t z = zi >= 0 ? kInt8StaticZeros[zi]
                                    : static_cast<int32_t>(std::clamp(std::nearbyint(-128.0f - lo / s), -128.0f, 127.0f));
          const ActQuantDesc ad = make_int8_static_desc(t, m, k, zp);
          SCOPED_TRACE(static_case_name(ad, s, zp ? z : 0, seed));
          GpuInt8Layer layer(m, n, k, ad.act_format(), rng);
          ASSERT_EQ(layer.desc.a.int8_zero_point, zp);
          ActQuant aq(ad, Device::cuda(0));
          ASSERT_TRUE(aq.can_implement().ok()) << aq.can_implement().message();
          if (::testing::Test::HasFailure()) return;
          DeviceBuffer dx(encode(x, t)), dq(static_cast<size_t>(m * k)), ds(static_cast<size_t>(m) * 4),
              dz(static_cast<size_t>(m) * 4), dout(static_cast<size_t>(m * n) * 2), dss(std::vector<float>{s}),
              dzz(std::vector<int32_t>{z});
          StreamHolder stream;
          dq.poison(stream.get());
          ds.poison(stream.get());
          dz.poison(stream.get());
          dout.poison(stream.get());
          ActQuantArgs qa;
          qa.x = dx.get();
          qa.q = dq.get();
          qa.scales = ds.as<float>();
          qa.zeros = dz.as<int32_t>();
          qa.static_scale = dss.as<float>();
          qa.static_zero_point = zp ? dzz.as<int32_t>() : nullptr;
          ASSERT_TRUE(aq.run(qa, nullptr, stream.get()).ok());
          const Status gs = layer.run(dq.get(), ds.get(), dz.get(), dout.get(), stream.get());
          ASSERT_TRUE(gs.ok()) << gs.message();
          stream.sync();
          const Quantized gpu = download_int8(dq, ds, dz, m, zp);
          const Quantized host = run_cpu(ad, encode(x, t), s, 0xFF, z);
          expect_same(gpu, host, k, ad.describe() + " (gpu vs cpu path)");
          // Not all zero, unless every activation code is the zero point (z = 127 on a short row
          // of positive values can clip them all).
          const int8_t zc = static_cast<int8_t>(zp ? z : 0);
          const bool some_code_off_zero =
              std::any_of(gpu.q.begin(), gpu.q.end(), [&](uint8_t c) { return static_cast<int8_t>(c) != zc; });
          expect_gemm_on_codes(layer, gpu, host, dout.download(), m, n, stream.get(), "the CPU path's",
                               some_code_off_zero);
        }
}

}  // namespace
}  // namespace lowbit::test
