// Tests of the smxx_gemv family (src/cuda/gemv/, docs/kernels/gemv.md) against the CPU
// reference on the same quantized operands: every width x group x zero-point mode x
// activation dtype, m = 1..8, odd n and k edges, bias, f32 output, int8 activations (and
// the device activation quantizer, code for code), outputs poisoned before each run (every
// element must be written), CUDA-graph capture and replay, and the public Gemm entry point.
// Test names: smxx_gemv.<what>; every failure prints m, n, k, format and launch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/gemv/smxx_gemv_act_quant.hpp"
#include "cuda/gemv/smxx_gemv_family.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/mixed_gemm/sm80_mixed_gemm_family.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/pack.hpp"
#include "lowbit/pack_gemv.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"
#include "test_gpu_common.hpp"
#include "test_mixed_gemm_common.hpp"

namespace lowbit::test {
namespace {

constexpr int kWidths[] = {1, 2, 3, 4, 5, 6, 8};
constexpr ZeroPoint kZeroModes[] = {ZeroPoint::kSymmetric, ZeroPoint::kInteger, ZeroPoint::kFloat};
constexpr int kGroups[] = {32, 64, 128, 0};

uint32_t g_seed = 91000;  // each case draws the next seed, printed on failure

// Relative Frobenius error allowed, by the coarser of the activation and output dtypes
// (the bounds: 1e-3 f16, 8e-3 bf16).
double tolerance(DType act, DType out) {
  auto tol = [](DType t) { return t == DType::kBF16 ? 8e-3 : t == DType::kF32 ? 1e-5 : 1e-3; };
  return std::max(act == DType::kI8 ? 1e-5 : tol(act), tol(out));
}

const char* zero_name(ZeroPoint z) {
  return z == ZeroPoint::kSymmetric ? "sym" : z == ZeroPoint::kInteger ? "int" : "fzp";
}

struct Case {
  int bits = 4;
  ZeroPoint zero = ZeroPoint::kSymmetric;
  int group = 128;
  DType act = DType::kF16;
  DType out = DType::kF16;
  int64_t m = 1, n = 64, k = 256;
  bool bias = false;
  DType scale_dtype = DType::kF16;
  float outlier = 0.0f;  // when nonzero: x[0][1] takes this value
};

GemmDesc desc_of(const Case& c) {
  GemmDesc d;
  d.m = c.m;
  d.n = c.n;
  d.k = c.k;
  d.a.dtype = c.act;
  IntWeightFormat f;
  f.bits = c.bits;
  f.zero = c.zero;
  f.group_size = c.group;
  f.scale_dtype = c.scale_dtype;
  d.w = WeightFormat::integer(f);
  d.out_dtype = c.out;
  d.has_bias = c.bias;
  return d;
}

// Device operands of one case and the reference result.
struct Operands {
  DeviceBuffer x, x_scales, w, scales, zeros, bias, y, ws;  // ws: the kernel's workspace (bit-serial)
  std::vector<float> ref;
  GemmArgs args() const {
    GemmArgs a;
    a.a = x.get();
    a.a_scales = x_scales.get();
    a.w = WeightView{w.get(), scales.get(), zeros.get(), nullptr};
    a.bias = bias.get();
    a.out = y.get();
    return a;
  }
};

Operands make_operands(const Case& c, const detail::GemmImpl& impl, std::mt19937& rng) {
  const GemmDesc d = desc_of(c);
  Operands o;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> wf(static_cast<size_t>(c.n * c.k));
  for (float& v : wf) v = normal(rng) + (c.zero == ZeroPoint::kSymmetric ? 0.0f : 0.25f);
  const IntWeight w = quantize_int(wf.data(), c.n, c.k, d.w.int_format);
  const PackedWeight pw = impl.pack(w);
  o.w = DeviceBuffer(pw.data);
  o.scales = DeviceBuffer(pw.scales);
  if (!pw.zeros.empty()) o.zeros = DeviceBuffer(pw.zeros);

  std::vector<float> x = random_normal(rng, c.m * c.k);
  if (c.outlier != 0.0f && c.k > 1) x[1] = c.outlier;
  std::vector<float> xr;  // the activations the kernel sees, as fp32
  if (c.act == DType::kI8) {
    const Int8Tensor q = quantize_int8(x.data(), c.m, c.k, false);
    o.x = DeviceBuffer(q.codes);
    o.x_scales = DeviceBuffer(q.scales);
    xr = dequantize(q);
  } else {
    o.x = DeviceBuffer(encode(x, c.act));
    xr = rounded(x, c.act);
  }
  std::vector<float> bias;
  if (c.bias) {
    bias = rounded(random_normal(rng, c.n), c.out);
    o.bias = DeviceBuffer(encode(bias, c.out));
  }
  const std::vector<float> wd = dequantize(w);
  o.ref.resize(static_cast<size_t>(c.m * c.n));
  gemm_nt_reference(xr.data(), wd.data(), c.bias ? bias.data() : nullptr, c.m, c.n, c.k, o.ref.data());
  o.y = DeviceBuffer(static_cast<size_t>(c.m * c.n) * dtype_size(c.out));
  o.ws = DeviceBuffer(impl.workspace_size());
  return o;
}

std::string describe(const Case& c, const std::string& kernel) {
  return desc_of(c).describe() + " zero=" + zero_name(c.zero) + " scales=" + dtype_name(c.scale_dtype) +
         " kernel=" + kernel;
}

// Runs one case through the family directly; checks written, finite, not all zero, error.
// `kernel` (optional) receives the kernel's name.
void check_case(const Case& c, std::string* kernel = nullptr) {
  const uint32_t seed = g_seed++;
  std::mt19937 rng(seed);
  const GemmDesc d = desc_of(c);
  const cuda::GpuSpec& gpu = cuda::gpu_spec(0);
  const Status ok = cuda::smxx_gemv_can_implement(d, gpu);
  ASSERT_TRUE(ok.ok()) << ok.message();
  const std::unique_ptr<detail::GemmImpl> impl = cuda::smxx_gemv_make(d, gpu);
  SCOPED_TRACE(describe(c, impl->name()) + " seed=" + std::to_string(seed));
  if (kernel != nullptr) *kernel = impl->name();
  Operands o = make_operands(c, *impl, rng);
  StreamHolder stream;
  o.y.poison(stream.get());
  const Status st = impl->run(o.args(), o.ws.get(), stream.get());
  ASSERT_TRUE(st.ok()) << st.message();
  stream.sync();
  const std::vector<float> out = decode(o.y.download(), c.out, c.m * c.n);
  ASSERT_EQ(count_non_finite(out), 0) << "unwritten or non-finite outputs";
  ASSERT_FALSE(all_zero(out));
  const double err = relative_error(out.data(), o.ref.data(), static_cast<int64_t>(out.size()));
  EXPECT_LE(err, tolerance(c.act, c.out)) << "relative error " << err;
}

// Every width x zero mode x group x {f16, bf16}, m cycling through 1..8, odd n, k with a
// partial last 256-column chunk. (Odd n: 4- and 8-bit weights stay in the gemv layout; the
// tiled layout, n a multiple of 16, is tested below.)
TEST(smxx_gemv, every_format_f16_bf16) {
  LOWBIT_REQUIRE_GPU();
  int i = 0;
  for (int bits : kWidths)
    for (ZeroPoint z : kZeroModes)
      for (int gs : kGroups)
        for (DType act : {DType::kF16, DType::kBF16}) {
          Case c;
          c.bits = bits;
          c.zero = z;
          c.group = gs;
          c.act = act;
          c.out = act;
          c.scale_dtype = (i % 3 == 0) ? DType::kBF16 : DType::kF16;
          c.m = 1 + i % 8;
          c.n = 16 * (3 + i % 5) + (i % 2 ? 7 : 1);  // odd, never a multiple of 16
          c.k = (gs == 0 ? 32 : gs) * (3 + 2 * (i % 3)) + (gs == 0 ? 0 : 0);
          if (c.k % 256 == 0) c.k += gs == 0 ? 32 : gs;
          ++i;
          check_case(c);
        }
}

// m = 1..8 on two formats, with a shape where blocks loop over several units.
TEST(smxx_gemv, every_m) {
  LOWBIT_REQUIRE_GPU();
  for (int64_t m = 1; m <= 8; ++m) {
    Case a;
    a.bits = 4, a.group = 128, a.m = m, a.n = 4111, a.k = 1152;
    check_case(a);
    Case b;
    b.bits = 3, b.zero = ZeroPoint::kFloat, b.group = 64, b.act = DType::kBF16, b.out = DType::kBF16;
    b.scale_dtype = DType::kBF16, b.m = m, b.n = 1001, b.k = 832;
    check_case(b);
  }
}

// Edges: n = 1, 15, 17; k = 32 (one group, one partial chunk); a partial chunk after full
// ones; bias; f32 output; activations too large for shared memory (read from L2).
TEST(smxx_gemv, edges_bias_f32_out) {
  LOWBIT_REQUIRE_GPU();
  for (int64_t n : {1, 15, 17, 33})
    for (int64_t k : {32, 4128}) {
      Case c;
      c.bits = 2, c.group = 32, c.n = n, c.k = k, c.m = 3, c.bias = true;
      check_case(c);
    }
  Case f32;
  f32.bits = 5, f32.zero = ZeroPoint::kInteger, f32.group = 0, f32.out = DType::kF32, f32.m = 6;
  f32.n = 300, f32.k = 640, f32.bias = true;
  check_case(f32);
  Case big;  // m * k * 2 = 229 KB of activations: more than L1 holds
  big.bits = 4, big.group = 128, big.m = 8, big.n = 264, big.k = 14336;
  check_case(big);
  Case big1 = big;
  big1.bits = 1, big1.m = 7, big1.zero = ZeroPoint::kFloat, big1.act = DType::kBF16, big1.out = DType::kBF16;
  check_case(big1);
}

// Launches the heuristic would not pick: 1..8 warps (the block's k-split; k = 1344 is 6
// chunks, the last one partial, so warps own unequal chunk counts and 7 or 8 warps are cut
// to 6), the correction table on and off (per-item corrections), two blocks per SM, and tiny
// grids so that a block streams many tiles (n = 217: 14 tiles), with 1, 3, 4 (the default)
// and 64 tiles per partial-sum phase, so that the two phase buffers alternate many times and
// the last phase is partial (14 = 3 + 3 + 3 + 3 + 2), the blocks' tiles interleaved or in
// contiguous ranges in turn. Also the sanitizer's racecheck target.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) { setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

TEST(smxx_gemv, forced_launches) {
  LOWBIT_REQUIRE_GPU();
  ScopedEnv decoding("LOWBIT_GEMV_BITSERIAL", "0");  // these are the decoding kernel's launches
  struct L {
    int bits, warps, bps, table, grid;  // -1: the heuristic's
    DType act;
    int64_t k;
  };
  const DType f16 = DType::kF16, bf16 = DType::kBF16, i8 = DType::kI8;
  for (const L& l : {L{1, 8, 1, 1, 3, f16, 1344}, L{1, 3, -1, 0, 2, bf16, 1344},
                     L{1, 1, 2, 1, 5, f16, 1344}, L{2, 8, 1, 0, 3, f16, 1344},
                     L{3, 5, 1, 1, 4, bf16, 1344}, L{4, 2, 2, 0, 3, f16, 1344},
                     L{4, 1, 1, 1, 2, f16, 1344}, L{8, 7, 1, 0, 2, bf16, 1344},
                     L{6, 4, 1, 1, 7, f16, 1344}, L{5, 2, 1, 0, 1, f16, 1344},
                     L{4, 8, 1, 1, 1, f16, 256}, L{2, 8, 2, 0, 2, f16, 64},
                     L{4, 6, 1, 0, 2, i8, 1344}, L{8, 8, 1, 1, 1, i8, 1344}}) {
    ScopedEnv launch("LOWBIT_GEMV_LAUNCH",
                     std::to_string(l.warps) + "," + std::to_string(l.bps) + "," + std::to_string(l.table));
    ScopedEnv grid("LOWBIT_GEMV_GRID", std::to_string(l.grid));
    static const int kPhases[] = {1, 3, 4, 64};
    ScopedEnv phase("LOWBIT_GEMV_PHASE", std::to_string(kPhases[(l.bits + l.warps) % 4]));
    // The blocks' tiles interleaved (the default) or contiguous ranges, in turn.
    ScopedEnv interleave("LOWBIT_GEMV_INTERLEAVE", (l.bits + l.grid) % 2 ? "0" : "1");
    Case c;
    c.bits = l.bits, c.group = 64, c.zero = ZeroPoint::kInteger, c.m = 5, c.n = 217, c.k = l.k, c.bias = true;
    c.act = l.act;
    c.out = l.act == i8 ? f16 : l.act;
    check_case(c);
  }
}

// Every format the tiled layout holds (4 and 8 bits x symmetric / integer zeros x every group
// x {f16, bf16}), in order, as a case with those fields set and the scales in the other dtype
// every third case; `shape(c, i)` fills the rest of case i. Checks that the GEMV reads the
// tiled layout, then `more(impl)` (the launch's name), then the result.
template <typename Shape, typename More>
void check_tiled_formats(Shape shape, More more) {
  int i = 0;
  for (int bits : {4, 8})
    for (ZeroPoint z : {ZeroPoint::kSymmetric, ZeroPoint::kInteger})
      for (int gs : kGroups)
        for (DType act : {DType::kF16, DType::kBF16}) {
          Case c;
          c.bits = bits, c.zero = z, c.group = gs, c.act = act, c.out = act;
          c.scale_dtype = i % 3 == 0 ? (act == DType::kF16 ? DType::kBF16 : DType::kF16) : act;
          shape(c, i);
          if (gs > 0 && c.k % gs != 0) c.k += gs - c.k % gs;
          ++i;
          const GemmDesc d = desc_of(c);
          const std::unique_ptr<detail::GemmImpl> impl = cuda::smxx_gemv_make(d, cuda::gpu_spec(0));
          EXPECT_EQ(impl->weight_layout(), tiled_layout_name(bits)) << d.describe();
          more(*impl);
          check_case(c);
        }
}

// The mixed GEMMs' tiled layout read in place (f16 / bf16 activations): 4 and 8 bits x
// symmetric / integer zeros x every group x {f16, bf16}, m cycling through 1..8, scales in
// the other dtype every third case, f32 output and bias in some; k = 64 (one partial item),
// k with a partial last item whose trailing groups lie past k (zero-filled scales), and
// whole items.
// Each case twice: the activations staged once per call (the default where they fit) and
// with LOWBIT_GEMV_XONCE=0 (direct loads at m <= 2, per-item staging above).
TEST(smxx_gemv, tiled_layout_every_format) {
  LOWBIT_REQUIRE_GPU();
  for (int xonce : {1, 0}) {
    std::unique_ptr<ScopedEnv> env;
    if (xonce == 0) env = std::make_unique<ScopedEnv>("LOWBIT_GEMV_XONCE", "0");
    check_tiled_formats(
        [](Case& c, int i) {
          c.out = i % 4 == 3 ? DType::kF32 : c.act;
          c.m = 1 + (i * 5) % 8;
          c.n = 16 * (1 + i % 7);
          const int64_t ks[] = {64, 320, 768, 1344, 2048};
          c.k = std::max<int64_t>(ks[i % 5], c.group);
          c.bias = i % 2 == 1;
        },
        [](const detail::GemmImpl&) {});
  }
  for (int64_t m = 1; m <= 8; ++m) {  // many tiles per block, Suite-1 like k
    Case c;
    c.bits = m % 2 ? 4 : 8, c.group = m % 3 == 0 ? 0 : 128, c.m = m, c.n = 2048, c.k = 4096;
    c.zero = m > 4 ? ZeroPoint::kInteger : ZeroPoint::kSymmetric;
    check_case(c);
  }
}

// The tiled layout at m <= 2 with two or more chunks per warp (forced: 2 warps), where the
// correction tables come from group sums of the staged activations (shuffles) instead of mma:
// 4 and 8 bits x symmetric / integer zeros x every group x {f16, bf16}, m = 1 and 2, k with a
// partial last chunk, scales in the other dtype every third case.
TEST(smxx_gemv, tiled_layout_correction_sums) {
  LOWBIT_REQUIRE_GPU();
  ScopedEnv env("LOWBIT_GEMV_LAUNCH", "2");
  check_tiled_formats(
      [](Case& c, int i) {
        c.m = 1 + i % 2;
        c.n = 48;
        c.k = 2368;  // 9 chunks and a partial one: 5 and 5 chunks for the two warps
      },
      [](const detail::GemmImpl& impl) {
        EXPECT_NE(impl.name().find("_w2d"), std::string::npos) << impl.name();
        EXPECT_EQ(impl.name().find("_ci"), std::string::npos) << impl.name();
      });
}

// Act-order weights (GPTQ desc_act) on the tiled layout: the staging gathers x[:, perm]
// (smxx_gemv.cuh). One case: random weights with a shuffled uniform g_idx (every group exactly
// group_size columns, k' = k: the pipeline) or any g_idx (k' > k: act_order_direct()),
// against the CPU reference on the original (unpermuted) operands, output poisoned.
struct ActCase {
  int bits = 4, group = 128;
  ZeroPoint zero = ZeroPoint::kSymmetric;
  DType t = DType::kF16;
  int64_t m = 1, n = 128, k = 1024;
  bool uniform = true, bias = false;
};

GemmDesc act_desc(const ActCase& c) {
  GemmDesc d;
  d.m = c.m, d.n = c.n, d.k = c.k;
  d.a.dtype = c.t;
  d.w = WeightFormat::integer(mixed::fmt(c.bits, c.group, c.zero, c.t, true));
  d.out_dtype = c.t;
  d.has_bias = c.bias;
  return d;
}

void check_act_case(const ActCase& c, std::string* kernel = nullptr) {
  const uint32_t seed = g_seed++;
  std::mt19937 rng(seed);
  const GemmDesc d = act_desc(c);
  const cuda::GpuSpec& gpu = cuda::gpu_spec(0);
  const Status ok = cuda::smxx_gemv_can_implement(d, gpu);
  ASSERT_TRUE(ok.ok()) << ok.message();
  const std::unique_ptr<detail::GemmImpl> impl = cuda::smxx_gemv_make(d, gpu);
  SCOPED_TRACE(d.describe() + (c.uniform ? " g_idx=uniform" : " g_idx=any") + " zero=" + zero_name(c.zero) +
               " kernel=" + impl->name() + " seed=" + std::to_string(seed));
  if (kernel != nullptr) *kernel = impl->name();
  EXPECT_NE(impl->name().find("_act"), std::string::npos) << impl->name();
  const IntWeight w = mixed::random_weight(d.w.int_format, c.n, c.k, rng, c.uniform);
  const PackedWeight pw = impl->pack(w);
  ASSERT_FALSE(pw.index.empty());
  DeviceBuffer data(pw.data), scales(pw.scales), zeros(pw.zeros), index(pw.index);
  const std::vector<float> x = rounded(random_normal(rng, c.m * c.k), c.t);
  std::vector<float> bias;
  if (c.bias) bias = rounded(random_normal(rng, c.n, 0.5f), c.t);
  DeviceBuffer dx(encode(x, c.t)), dbias(c.bias ? encode(bias, c.t) : std::vector<uint8_t>{});
  std::vector<float> ref(static_cast<size_t>(c.m * c.n));
  const std::vector<float> wd = dequantize(w);
  gemm_nt_reference(x.data(), wd.data(), c.bias ? bias.data() : nullptr, c.m, c.n, c.k, ref.data());
  DeviceBuffer y(static_cast<size_t>(c.m * c.n) * dtype_size(c.t)), ws(impl->workspace_size());
  GemmArgs a;
  a.a = dx.get();
  a.w = WeightView{data.get(), scales.get(), zeros.get(), index.get()};
  a.bias = dbias.get();
  a.out = y.get();
  StreamHolder stream;
  y.poison(stream.get());
  const Status st = impl->run(a, ws.get(), stream.get());
  ASSERT_TRUE(st.ok()) << st.message();
  stream.sync();
  const std::vector<float> out = decode(y.download(), c.t, c.m * c.n);
  ASSERT_EQ(count_non_finite(out), 0) << "unwritten or non-finite outputs";
  ASSERT_FALSE(all_zero(out));
  const double err = relative_error(out.data(), ref.data(), static_cast<int64_t>(out.size()));
  EXPECT_LE(err, mixed::tolerance(c.t)) << "relative error " << err;
  // Without the index the call is refused, not run.
  a.w.index = nullptr;
  const Status missing = impl->run(a, ws.get(), stream.get());
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("index"), std::string::npos) << missing.message();
}

// Every width x {f16, bf16} x group 32 / 128 x uniform / any g_idx, zero points every other
// case, m = 1..8, k with a partial last 256-column chunk (1408 = 5.5 chunks), bias.
TEST(smxx_gemv, tiled_layout_act_order) {
  LOWBIT_REQUIRE_GPU();
  int i = 0;
  for (DType t : {DType::kF16, DType::kBF16})
    for (int bits : {4, 8})
      for (int group : {32, 128})
        for (bool uniform : {true, false}) {
          ActCase c;
          c.t = t, c.bits = bits, c.group = group, c.uniform = uniform;
          c.zero = i % 2 ? ZeroPoint::kInteger : ZeroPoint::kSymmetric;
          c.m = 1 + (i * 3) % 8;
          c.n = 16 * (3 + i % 5);
          c.k = 1408;
          c.bias = i % 3 == 0;
          check_act_case(c);
          ++i;
        }
  // Suite-1-like shapes: qkv-like at m = 1 (several chunks per warp: the group-sum tables) and
  // down-like (k = 14336) at m = 1 and 8 (sm_90: the cluster launch that splits k).
  for (int64_t m : {1, 2, 8})
    for (int64_t k : {4096, 14336}) {
      if (m == 8 && k == 14336 && cuda::gpu_spec(0).cc < 90) continue;  // one block cannot stage it
      ActCase c;
      c.m = m, c.n = 512, c.k = k;
      c.zero = m == 2 ? ZeroPoint::kInteger : ZeroPoint::kSymmetric;
      // Below Hopper's shared memory per block (A100: 163 KB), k = 14336 with the activations'
      // copy may not fit one block of 16 warps: the launch then takes fewer warps, and where
      // none fits the family refuses it (a mixed GEMM takes it).
      if (k == 14336 && cuda::gpu_spec(0).smem_per_block_optin < 200 * 1024 &&
          !cuda::smxx_gemv_can_implement(act_desc(c), cuda::gpu_spec(0)).ok())
        continue;
      std::string name;
      check_act_case(c, &name);
    }
}

// Clusters splitting k forced at small k (sm_90), and the refusal where the activations are not
// staged once (the gather lives in that staging).
TEST(smxx_gemv, tiled_layout_act_order_launches) {
  LOWBIT_REQUIRE_GPU();
  if (cuda::gpu_spec(0).cc >= 90) {
    {
      // Each block gathers its chunks' values from its copy of the rows (m <= 2, and m = 3 here
      // by default), or scatters them through the table of places, whose entries of the other
      // block's chunks stay -1 (forced with LOWBIT_GEMV_ACT_GATHER=0).
      ScopedEnv env("LOWBIT_GEMV_KSPLIT", "2");
      for (bool forced_scatter : {false, true})
        for (int64_t m : {1, 2, 3})
          for (bool uniform : {true, false}) {
            std::optional<ScopedEnv> scatter;
            if (forced_scatter) scatter.emplace("LOWBIT_GEMV_ACT_GATHER", "0");
            ActCase c;
            c.m = m, c.n = 96, c.k = 2048, c.uniform = uniform;
            std::string name;
            check_act_case(c, &name);
            EXPECT_NE(name.find("_k2"), std::string::npos) << name;
          }
    }
    // Long k at m = 2, unforced: one block of 16 warps cannot hold the activations and their
    // copy (2 x 56 KB each at k = 28672), so the launch splits k over a cluster.
    ActCase c;
    c.m = 2, c.n = 64, c.k = 28672;
    std::string name;
    check_act_case(c, &name);
    EXPECT_NE(name.find("_k"), std::string::npos) << name;
  }
  {
    // More than four chunks per warp (four warps over 24 chunks): the gather reloads the perm
    // values of the warp's chunks four at a time, the scatter writes the table in turns of four.
    ScopedEnv w("LOWBIT_GEMV_LAUNCH", "4,1");
    for (const char* gather : {"1", "0"}) {
      ScopedEnv g("LOWBIT_GEMV_ACT_GATHER", gather);
      ActCase c;
      c.m = 5, c.n = 64, c.k = 6144, c.zero = ZeroPoint::kInteger;
      check_act_case(c);
    }
  }
  ScopedEnv env("LOWBIT_GEMV_XONCE", "0");
  ActCase c;
  const Status st = cuda::smxx_gemv_can_implement(act_desc(c), cuda::gpu_spec(0));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("act-order"), std::string::npos) << st.message();
}

// The lanes' gather in rounds of kActGatherRoundRows rows (4-bit weights; the kernels of the
// act_order = 2 rows, "_actr"), forced with LOWBIT_GEMV_ACT_GATHER=2: every group class, dtype,
// zero-point mode, uniform and any g_idx, odd m (a last round of one row), a partial last chunk,
// bias; more than four chunks per warp (the perm values reloaded each round); clusters (sm_90).
TEST(smxx_gemv, tiled_layout_act_order_rounds) {
  LOWBIT_REQUIRE_GPU();
  ScopedEnv rounds("LOWBIT_GEMV_ACT_GATHER", "2");
  int i = 0;
  for (DType t : {DType::kF16, DType::kBF16})
    for (int group : {32, 64, 128})
      for (bool uniform : {true, false}) {
        ActCase c;
        c.t = t, c.bits = 4, c.group = group, c.uniform = uniform;
        c.zero = i % 2 ? ZeroPoint::kInteger : ZeroPoint::kSymmetric;
        c.m = 3 + (i * 3) % 6;
        c.n = 16 * (3 + i % 5);
        c.k = 1408;
        c.bias = i % 3 == 0;
        std::string name;
        check_act_case(c, &name);
        EXPECT_NE(name.find("_actr"), std::string::npos) << name;
        ++i;
      }
  {
    ScopedEnv w("LOWBIT_GEMV_LAUNCH", "4,1");  // four warps over 24 chunks: six per warp
    for (int64_t m : {5, 8}) {
      ActCase c;
      c.m = m, c.n = 64, c.k = 6144, c.zero = ZeroPoint::kInteger;
      std::string name;
      check_act_case(c, &name);
      EXPECT_NE(name.find("_actr"), std::string::npos) << name;
    }
  }
  if (cuda::gpu_spec(0).cc >= 90) {
    ScopedEnv split("LOWBIT_GEMV_KSPLIT", "2");
    for (int64_t m : {3, 6, 8}) {
      ActCase c;
      c.m = m, c.n = 96, c.k = 2048, c.uniform = m != 6;
      std::string name;
      check_act_case(c, &name);
      EXPECT_NE(name.find("_k2"), std::string::npos) << name;
      EXPECT_NE(name.find("_actr"), std::string::npos) << name;
    }
  }
  // Never for 8-bit weights (measured slower there), nor at m <= 2.
  for (int bits : {8, 4}) {
    ActCase c;
    c.bits = bits, c.m = bits == 8 ? 5 : 2;
    EXPECT_EQ(cuda::smxx_gemv_launch_for(act_desc(c), cuda::gpu_spec(0)).act_rounds, 0) << bits << " bits, m " << c.m;
  }
}

// A corrupt act-order index (a perm value out of range, or repeated: one entry of the kernel's
// table of places is then never written, or the gather reads a value twice or not at all): the results are unspecified, but the call must not fault (its shared-memory
// accesses stay aligned and in bounds). Not under racecheck: a repeated value is two writes of
// one table entry.
TEST(smxx_gemv, corrupt_act_order_index_does_not_fault) {
  LOWBIT_REQUIRE_GPU();
  for (const char* gather : {"1", "0", "2"}) {  // the gather from the rows' copy, the table's scatter, the rounds
    for (int32_t bad : {-1, 0}) {  // a value out of range, a value repeated
      ScopedEnv mode("LOWBIT_GEMV_ACT_GATHER", gather);
      const int64_t m = 3;
      ActCase c;
      c.m = m, c.n = 64, c.k = 1024;
      std::mt19937 rng(g_seed++);
      const GemmDesc d = act_desc(c);
      const std::unique_ptr<detail::GemmImpl> impl = cuda::smxx_gemv_make(d, cuda::gpu_spec(0));
      const IntWeight w = mixed::random_weight(d.w.int_format, c.n, c.k, rng, true);
      PackedWeight pw = impl->pack(w);
      int32_t* idx = reinterpret_cast<int32_t*>(pw.index.data());
      ASSERT_EQ(idx[0], c.k);
      idx[4 + 1] = bad < 0 ? static_cast<int32_t>(c.k) + 12345 : idx[4 + 0];
      DeviceBuffer data(pw.data), scales(pw.scales), index(pw.index);
      DeviceBuffer x(encode(random_normal(rng, c.m * c.k), c.t)), y(static_cast<size_t>(c.m * c.n) * 2);
      GemmArgs a;
      a.a = x.get();
      a.w = WeightView{data.get(), scales.get(), nullptr, index.get()};
      a.out = y.get();
      StreamHolder stream;
      ASSERT_TRUE(impl->run(a, nullptr, stream.get()).ok()) << "m " << m;
      EXPECT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess) << "m " << m;
    }
  }
}

// The public API: act-order weights at decode m go to this family (Suite 1's qkv and down at
// m = 1), except where its launch would need a cluster of 4, or a cluster of fewer than 12 warps,
// at m > 5 (unless 4-bit on a cluster of 2 x 16 warps) or on n >= 7168 (long k on sm_90: measured
// slower than sm80_mixed_gemm, select.cpp gemv_first_long_k); m = 16 stays with the mixed GEMMs.
TEST(smxx_gemv, tiled_layout_act_order_selection) {
  LOWBIT_REQUIRE_GPU();
  struct Pick {
    int64_t m, n, k;
    const char* want;
  };
  std::vector<Pick> picks = {{1, 6144, 4096, "smxx_gemv"}, {8, 4096, 14336, "sm80_mixed_gemm"},
                             {16, 6144, 4096, "sm80_mixed_gemm"}};
  if (cuda::gpu_spec(0).cc >= 90) {  // Hopper's shared memory: k = 14336 with the table fits one block
    picks.push_back({1, 4096, 14336, "smxx_gemv"});
    picks.push_back({4, 4096, 14336, "smxx_gemv"});  // a cluster of 2
    picks.push_back({2, 4096, 14336, "smxx_gemv"});
    picks.push_back({1, 8192, 28672, "smxx_gemv"});        // one block: the rows' copy fits
    picks.push_back({2, 8192, 28672, "sm80_mixed_gemm"});  // a cluster on n >= 7168 (select.cpp)
    picks.push_back({6, 4096, 14336, "sm80_mixed_gemm"});  // a cluster of 14 warps at m > 5
    picks.push_back({7, 2048, 8192, "smxx_gemv"});         // 4-bit, a cluster of 2 x 16 warps (session 70)
    picks.push_back({8, 1536, 8960, "sm80_mixed_gemm"});   // a cluster of 8 warps at m > 5
  }
  for (const Pick& pk : picks) {
    ActCase c;
    c.m = pk.m, c.n = pk.n, c.k = pk.k;
    Gemm g(act_desc(c), Device::cuda(0));
    ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
    EXPECT_EQ(g.kernel_name().rfind(pk.want, 0), 0u) << "m=" << pk.m << " " << pk.n << "x" << pk.k << ": " << g.kernel_name();
  }
  // One block of 16 warps per SM for act-order weights, where plain weights take two of 8 (Suite
  // 1's o and gate_up at m = 1; choose_gemv_launch, measured in session 67).
  for (int64_t n : {4096, 28672}) {
    ActCase c;
    c.m = 1, c.n = n, c.k = 4096;
    const std::unique_ptr<detail::GemmImpl> impl = cuda::smxx_gemv_make(act_desc(c), cuda::gpu_spec(0));
    EXPECT_NE(impl->name().find("_w16d"), std::string::npos) << n << "x4096: " << impl->name();
  }
  // The lanes' gather from a copy of the rows at m <= 2; above it where that copy leaves the
  // launch as the table's would be (choose_gemv_launch), else the table's scatter. With Hopper's
  // shared memory the copy fits up to m = 6 on 28672 x 4096, not at m = 8 (fewer tiles per phase).
  for (int64_t m = 1; m <= 8; ++m) {
    ActCase c;
    c.m = m, c.n = 28672, c.k = 4096;
    const gemv::GemvLaunch l = cuda::smxx_gemv_launch_for(act_desc(c), cuda::gpu_spec(0));
    if (l.x_mode != gemv::kGemvXOnce) continue;  // refused (smaller shared memory)
    if (m <= 2 || (m <= 6 && cuda::gpu_spec(0).cc >= 90)) {
      EXPECT_EQ(l.act_gather, 1) << "m " << m;
      EXPECT_EQ(l.act_rounds, 0) << "m " << m;
    }
    // m = 8: the copy of every row would cut the tiles per phase, so 4-bit weights gather in
    // rounds through the table's region (the table's launch).
    if (m == 8 && cuda::gpu_spec(0).cc >= 90) EXPECT_EQ(l.act_rounds, 1) << "m " << m;
    if (m > 2 && l.act_gather) {
      ScopedEnv scatter("LOWBIT_GEMV_ACT_GATHER", "0");
      const gemv::GemvLaunch t = cuda::smxx_gemv_launch_for(act_desc(c), cuda::gpu_spec(0));
      EXPECT_EQ(t.act_gather, 0);
      EXPECT_EQ(std::make_tuple(l.warps, l.blocks_per_sm, l.ksplit, l.phase_tiles, l.x_mode),
                std::make_tuple(t.warps, t.blocks_per_sm, t.ksplit, t.phase_tiles, t.x_mode))
          << "m " << m;
    }
  }
}

// int8 activations, 4- and 8-bit weights, symmetric and integer zeros, every group.
TEST(smxx_gemv, int8_activations) {
  LOWBIT_REQUIRE_GPU();
  int i = 0;
  for (int bits : {4, 8})
    for (ZeroPoint z : {ZeroPoint::kSymmetric, ZeroPoint::kInteger})
      for (int gs : kGroups) {
        Case c;
        c.bits = bits, c.zero = z, c.group = gs, c.act = DType::kI8;
        c.out = i % 2 ? DType::kBF16 : DType::kF16;
        c.m = 1 + (i * 3) % 8, c.n = 16 * (2 + i % 4) + 5, c.k = 1536 + (gs == 0 ? 32 : gs);
        c.bias = i % 3 == 0;
        ++i;
        check_case(c);
      }
}

// The device quantizer gives the host quantize_int8's codes and scales exactly.
TEST(smxx_gemv, int8_activation_quantizer_matches_host) {
  LOWBIT_REQUIRE_GPU();
  for (DType t : {DType::kF16, DType::kBF16})
    for (int64_t m : {1, 5, 8}) {
      const int64_t k = 4104;
      std::mt19937 rng(g_seed++);
      std::vector<float> x = rounded(random_normal(rng, m * k, 3.0f), t);
      x[7] = 0.0f;
      const Int8Tensor host = quantize_int8(x.data(), m, k, false);
      DeviceBuffer dx(encode(x, t)), dq(static_cast<size_t>(m * k)), ds(static_cast<size_t>(m) * 4);
      StreamHolder s;
      const Status st = cuda::gemv_quantize_activations_int8(t, dx.get(), m, k, dq.as<int8_t>(), ds.as<float>(), s.get());
      ASSERT_TRUE(st.ok()) << st.message();
      s.sync();
      const std::vector<uint8_t> q = dq.download(), sc = ds.download();
      std::vector<float> scales(static_cast<size_t>(m));
      std::memcpy(scales.data(), sc.data(), sc.size());
      EXPECT_EQ(scales, host.scales) << dtype_name(t) << " m=" << m;
      EXPECT_EQ(0, std::memcmp(q.data(), host.codes.data(), q.size())) << dtype_name(t) << " m=" << m;
    }
}

// The bit-serial kernel (1- and 2-bit weights at m = 1, smxx_gemv_bitserial.cuh) and the
// decoding kernel for the same formats, each forced (LOWBIT_GEMV_BITSERIAL): every zero mode x
// group x dtype, odd n, partial last chunks, bias; m = 1 and 3 (the bit-serial kernel takes
// m = 1 only, so m = 3 checks it is not used). Then the bit-serial launch forced to k-splits of
// 1, 4 and 16 warps (k = 1408: 6 chunks, the last partial; with 4 warps two have two chunks per
// tile and two have one, so they end phases in different iterations of the item loop; 16 is
// cut to 6) and to 2 blocks, so that a block runs 109 tiles on n = 3470 (14 phases of 8 tiles,
// the two partial-sum buffers alternating) or 7 on n = 217; long k (14336: 56 chunks over 16
// warps, unequal counts); activations with a large outlier (the per-block fixed point keeps the
// error relative to the block's maximum).
TEST(smxx_gemv, bitserial_and_decoding_kernels) {
  LOWBIT_REQUIRE_GPU();
  // The default rule: 1-bit g128 at m = 1 only (the measured case).
  for (auto [bits, group, m, want] : {std::tuple{1, 128, 1, true}, std::tuple{1, 64, 1, false},
                                      std::tuple{1, 128, 2, false}, std::tuple{2, 128, 1, false}}) {
    Case c;
    c.bits = bits, c.group = group, c.m = m, c.n = 300, c.k = 1024;
    const std::unique_ptr<detail::GemmImpl> impl = cuda::smxx_gemv_make(desc_of(c), cuda::gpu_spec(0));
    EXPECT_EQ(impl->name().find("_bs_") != std::string::npos, want) << impl->name();
  }
  for (const char* mode : {"1", "0"}) {
    ScopedEnv env("LOWBIT_GEMV_BITSERIAL", mode);
    int i = 0;
    for (int bits : {1, 2})
      for (ZeroPoint z : kZeroModes)
        for (int gs : kGroups)
          for (DType act : {DType::kF16, DType::kBF16})
            for (int64_t m : {1, 3}) {
              Case c;
              c.bits = bits, c.zero = z, c.group = gs, c.act = act, c.out = act;
              c.scale_dtype = (i % 3 == 1) ? DType::kBF16 : DType::kF16;
              c.m = m;
              c.n = 16 * (2 + i % 4) + (i % 2 ? 5 : 11);
              c.k = (gs == 0 ? 32 : gs) * (3 + 2 * (i % 3));
              if (c.k % 256 == 0) c.k += gs == 0 ? 32 : gs;
              c.bias = i % 4 == 0;
              ++i;
              std::string kernel;
              check_case(c, &kernel);
              EXPECT_EQ(kernel.find("_bs_") != std::string::npos, mode[0] == '1' && m == 1) << kernel;
            }
  }
  ScopedEnv env("LOWBIT_GEMV_BITSERIAL", "1");
  for (const char* warps : {"1", "4", "16"})
    for (const char* grid : {"2", "1000"}) {
      ScopedEnv w("LOWBIT_GEMV_BS_WARPS", warps);
      ScopedEnv g("LOWBIT_GEMV_GRID", grid);
      for (int bits : {1, 2})
        for (int64_t n : {217, 3470}) {
          ScopedEnv interleave("LOWBIT_GEMV_INTERLEAVE", n == 217 ? "0" : "1");  // and the default
          Case c;
          c.bits = bits, c.group = bits == 1 ? 32 : 128, c.n = n, c.k = 1408;
          c.zero = bits == 1 ? ZeroPoint::kInteger : ZeroPoint::kSymmetric, c.bias = true, c.out = DType::kF32;
          check_case(c);
        }
    }
  for (int bits : {1, 2}) {
    Case lk;
    lk.bits = bits, lk.group = 128, lk.n = 100, lk.k = 14336, lk.zero = ZeroPoint::kFloat;
    check_case(lk);
    lk.outlier = 3000.0f;
    check_case(lk);
  }
}

// A captured run replays bit for bit (and rewrites every element after a poison). m = 1 with
// 1- and 2-bit weights runs the bit-serial kernel (forced for 2-bit): two kernels per run, so
// the graph holds four PDL-linked nodes sharing one workspace. On sm_90 also two launches as
// clusters of blocks splitting k (LOWBIT_GEMV_KSPLIT).
TEST(smxx_gemv, graph_capture_replays_bit_exact) {
  LOWBIT_REQUIRE_GPU();
  ScopedEnv bitserial("LOWBIT_GEMV_BITSERIAL", "1");
  struct G {
    int bits, m, ksplit;
  };
  for (auto [bits, m, ksplit] : {G{1, 4, 1}, G{3, 4, 1}, G{8, 4, 1}, G{1, 1, 1}, G{2, 1, 1}, G{4, 3, 2}, G{8, 8, 4}}) {
    if (ksplit > 1 && cuda::gpu_spec(0).cc < 90) continue;
    ScopedEnv split("LOWBIT_GEMV_KSPLIT", std::to_string(ksplit));
    Case c;
    c.bits = bits, c.group = 128, c.m = m, c.n = ksplit > 1 ? 2048 : 2000, c.k = 2048, c.bias = true;
    const GemmDesc d = desc_of(c);
    const cuda::GpuSpec& gpu = cuda::gpu_spec(0);
    const std::unique_ptr<detail::GemmImpl> impl = cuda::smxx_gemv_make(d, gpu);
    SCOPED_TRACE(describe(c, impl->name()));
    EXPECT_EQ(impl->name().find("_k" + std::to_string(ksplit)) != std::string::npos, ksplit > 1) << impl->name();
    std::mt19937 rng(g_seed++);
    Operands o = make_operands(c, *impl, rng);
    StreamHolder s;
    o.y.poison(s.get());
    ASSERT_TRUE(impl->run(o.args(), o.ws.get(), s.get()).ok());
    s.sync();
    const std::vector<uint8_t> eager = o.y.download();
    capture_and_replay(
        s.get(),
        [&] {
          const Status st = impl->run(o.args(), o.ws.get(), s.get());
          const Status st2 = impl->run(o.args(), o.ws.get(), s.get());  // two nodes: a PDL edge between them
          return st.ok() ? st2 : st;
        },
        3, [&](int) { o.y.poison(s.get()); },
        [&](int r) { EXPECT_TRUE(o.y.download() == eager) << "replay " << r << " differs from eager"; });
  }
}

// Clusters of blocks splitting k (sm_90; LOWBIT_GEMV_KSPLIT forces 2 or 4): the tiled layout's
// staged kernels (activations staged once, or per item when they do not fit), 4 / 8 bits,
// symmetric / integer zeros, every group class, f16 / bf16, m = 1..8, a partial last chunk,
// bias, one or three tiles per phase, small grids (several tiles and phases per cluster); the
// result bit-identical from run to run. Launches without cluster kernels (the gemv layout)
// ignore the knob.
TEST(smxx_gemv, cluster_k_split) {
  LOWBIT_REQUIRE_GPU();
  if (cuda::gpu_spec(0).cc < 90) GTEST_SKIP() << "thread-block clusters need sm_90";
  ScopedEnv decoding("LOWBIT_GEMV_BITSERIAL", "0");
  struct K {
    int bits;
    ZeroPoint zero;
    int group;
    DType act;
    int64_t m, n;
    bool cluster;  // tiled layout with staged activations (m > 2, or staged once): a cluster kernel exists
  };
  const ZeroPoint sym = ZeroPoint::kSymmetric, zint = ZeroPoint::kInteger, zf = ZeroPoint::kFloat;
  const DType f16 = DType::kF16, bf16 = DType::kBF16, i8 = DType::kI8;
  int i = 0;
  for (int ks : {2, 4})
    for (const K& k : {K{4, sym, 128, f16, 8, 64, true}, K{4, zint, 32, bf16, 5, 48, true}, K{8, sym, 0, f16, 7, 80, true},
                       K{8, zint, 64, bf16, 3, 32, true}, K{4, zint, 0, f16, 4, 16, true}, K{8, sym, 128, bf16, 6, 96, true},
                       K{4, sym, 64, bf16, 7, 32, true}, K{8, zint, 32, f16, 8, 48, true},
                       K{4, sym, 128, f16, 1, 64, true}, K{8, sym, 0, bf16, 2, 16, true}, K{3, zf, 64, bf16, 6, 50, false},
                       K{4, sym, 128, i8, 4, 29, false}}) {
      ScopedEnv split("LOWBIT_GEMV_KSPLIT", std::to_string(ks));
      ScopedEnv phase("LOWBIT_GEMV_PHASE", i % 2 ? "3" : "1");
      std::unique_ptr<ScopedEnv> grid;
      if (i % 3 != 2) grid = std::make_unique<ScopedEnv>("LOWBIT_GEMV_GRID", std::to_string(ks * (1 + i % 2)));
      // Contiguous tile ranges (the clusters' default) or interleaved (forced), in turn.
      ScopedEnv interleave("LOWBIT_GEMV_INTERLEAVE", (i / 2) % 2 ? "1" : "0");
      Case c;
      c.bits = k.bits, c.zero = k.zero, c.group = k.group, c.act = k.act, c.m = k.m, c.n = k.n;
      c.out = k.act == i8 ? f16 : k.act;
      c.k = 8320;  // 33 chunks, the last half full: 16 warps x 2 or 8 x 4 blocks
      c.bias = i % 2 == 0;
      ++i;
      std::string name;
      check_case(c, &name);
      EXPECT_EQ(name.find("_k" + std::to_string(ks)) != std::string::npos, k.cluster) << name;
      // Deterministic: two runs, the same bytes.
      const GemmDesc d = desc_of(c);
      const std::unique_ptr<detail::GemmImpl> impl = cuda::smxx_gemv_make(d, cuda::gpu_spec(0));
      std::mt19937 rng(g_seed++);
      Operands o = make_operands(c, *impl, rng);
      StreamHolder stream;
      std::vector<uint8_t> first;
      for (int run = 0; run < 2; ++run) {
        o.y.poison(stream.get());
        ASSERT_TRUE(impl->run(o.args(), o.ws.get(), stream.get()).ok());
        stream.sync();
        if (run == 0) first = o.y.download();
        else EXPECT_EQ(first, o.y.download()) << "run-to-run difference: " << name;
      }
    }
}

// The launch choice for Suite 1's down (k = 14336, n = 4096) on an H200-like GPU (132 SMs,
// 227 KB of shared memory per block), pinned to the measurements behind it
// (choose_gemv_launch, docs/kernels/gemv.md v11, v16): one block of 16 warps while the
// activations fit once, then clusters of 2 with the warp count of
// the lightest busiest block among those holding two tiles per phase; without clusters
// (sm_89-like) the old fallbacks. Host only.
TEST(smxx_gemv, cluster_launch_follows_measurements) {
  cuda::GpuSpec h200;
  h200.cc = 90, h200.sm_count = 132, h200.smem_per_sm = 233472, h200.smem_per_block_optin = 232448;
  auto pick = [&](int bits, int m, bool clusters) {
    gemv::GemvShape s;
    s.bits = bits, s.layout = gemv::kLayoutTiled, s.act = gemv::kActF16, s.slots = bits == 4 ? 2 : 1;
    s.m = m, s.n = 4096, s.k = 14336, s.clusters = clusters;
    const gemv::GemvLaunch l = gemv::choose_gemv_launch(s, h200);
    // Clusters keep contiguous tile ranges, every other launch interleaves its blocks' tiles (v16).
    EXPECT_EQ(l.tile_interleave, l.ksplit == 1) << "bits " << bits << " m " << m;
    return std::to_string(l.warps) + "x" + std::to_string(l.ksplit) + (l.x_mode == gemv::kGemvXOnce ? " once" : " item");
  };
  const char* w4[] = {"16x1 once", "16x1 once", "16x1 once", "16x1 once", "14x2 once", "14x2 once", "14x2 once", "14x2 once"};
  const char* w8[] = {"16x1 once", "16x1 once", "14x2 once", "14x2 once", "14x2 once", "14x2 once", "10x2 once", "10x2 once"};
  for (int m = 1; m <= 8; ++m) {
    EXPECT_EQ(pick(4, m, true), w4[m - 1]) << "w4 m=" << m;
    EXPECT_EQ(pick(8, m, true), w8[m - 1]) << "w8 m=" << m;
  }
  // No clusters: fewer warps while that lets one block hold the activations (v9), else per item.
  EXPECT_EQ(pick(4, 5, false), "12x1 once");
  EXPECT_EQ(pick(4, 6, false), "8x1 once");
  EXPECT_EQ(pick(4, 8, false), "16x1 item");
  EXPECT_EQ(pick(8, 1, false), "16x1 once");
}

// The tiled layout at m = 1 on short k with at most one tile per block at two blocks per SM
// (Suite 1's o) takes two blocks of 8 warps per SM; m = 2, more tiles, longer or shorter k and
// the gemv layout keep one block of 16 (choose_gemv_launch, docs/kernels/gemv.md v23). Host only.
TEST(smxx_gemv, short_k_launch_follows_measurements) {
  if (std::getenv("LOWBIT_GEMV_LAUNCH") != nullptr) GTEST_SKIP() << "LOWBIT_GEMV_LAUNCH overrides the rule";
  cuda::GpuSpec h200;
  h200.cc = 90, h200.sm_count = 132, h200.smem_per_sm = 233472, h200.smem_per_block_optin = 232448;
  auto pick = [&](int bits, int layout, int slots, int m, int64_t n, int64_t k) {
    gemv::GemvShape s;
    s.bits = bits, s.layout = layout, s.act = gemv::kActF16, s.slots = slots, s.m = m;
    s.n = n, s.k = k, s.clusters = true;
    const gemv::GemvLaunch l = gemv::choose_gemv_launch(s, h200);
    return std::to_string(l.warps) + "x" + std::to_string(l.blocks_per_sm);
  };
  for (int bits : {4, 8})
    for (int slots : {1, 2, 8}) {
      EXPECT_EQ(pick(bits, gemv::kLayoutTiled, slots, 1, 4096, 4096), "8x2") << bits << " bits, slots " << slots;
      EXPECT_EQ(pick(bits, gemv::kLayoutTiled, slots, 1, 4224, 3072), "8x2") << bits << " bits, slots " << slots;
      EXPECT_EQ(pick(bits, gemv::kLayoutTiled, slots, 2, 4096, 4096), "16x1") << bits << " bits, slots " << slots;
      EXPECT_EQ(pick(bits, gemv::kLayoutTiled, slots, 1, 6144, 4096), "16x1") << bits << " bits, slots " << slots;
      EXPECT_EQ(pick(bits, gemv::kLayoutTiled, slots, 1, 4096, 14336), "16x1") << bits << " bits, slots " << slots;
      EXPECT_EQ(pick(bits, gemv::kLayoutTiled, slots, 1, 4096, 2048), "8x1") << bits << " bits, slots " << slots;
    }
  EXPECT_EQ(pick(2, gemv::kLayoutGemv, 2, 1, 4096, 4096), "16x1");
}

// Which launches prefetch the grouped scale / zero rows into L2 after the wait
// (choose_gemv_launch, docs/kernels/gemv.md v20, v21): on an H100-class memory (theoretical
// 3352 GB/s), 4-bit grouped weights of the tiled layout at m <= 4 (measured faster there,
// slower at m = 8 and with 8-bit weights), nothing per-channel or in the gemv layout (whose
// entries travel with the weights); on the H200 (4814 GB/s) none (slower at every m). Host only.
TEST(smxx_gemv, scale_prefetch_follows_measurements) {
  if (std::getenv("LOWBIT_GEMV_SCALE_PREFETCH") != nullptr) GTEST_SKIP() << "LOWBIT_GEMV_SCALE_PREFETCH overrides the rule";
  cuda::GpuSpec h100;
  h100.cc = 90, h100.sm_count = 132, h100.smem_per_sm = 233472, h100.smem_per_block_optin = 232448;
  h100.dram_gbps = 2.0 * 2619e6 * 5120 / 8 / 1e9;  // 3352
  cuda::GpuSpec h200 = h100;
  h200.dram_gbps = 2.0 * 3201e6 * 6016 / 8 / 1e9;  // 4814 (a 6016-bit bus)
  auto prefetch = [&](const cuda::GpuSpec& gpu, int bits, int layout, int slots, int m) {
    gemv::GemvShape s;
    s.bits = bits, s.layout = layout, s.act = gemv::kActF16, s.slots = slots, s.m = m;
    s.n = 4096, s.k = 4096, s.clusters = true;
    return gemv::choose_gemv_launch(s, gpu).scale_prefetch;
  };
  for (int m = 1; m <= 8; ++m) {
    EXPECT_EQ(prefetch(h100, 4, gemv::kLayoutTiled, 2, m), m <= 4) << "w4 g128 m=" << m;
    EXPECT_EQ(prefetch(h100, 4, gemv::kLayoutTiled, 8, m), m <= 4) << "w4 g32 m=" << m;
    EXPECT_FALSE(prefetch(h100, 4, gemv::kLayoutTiled, 1, m)) << "w4 per-channel m=" << m;
    EXPECT_FALSE(prefetch(h100, 8, gemv::kLayoutTiled, 2, m)) << "w8 g128 m=" << m;
    EXPECT_FALSE(prefetch(h100, 4, gemv::kLayoutGemv, 2, m)) << "w4 gemv layout m=" << m;
    EXPECT_FALSE(prefetch(h200, 4, gemv::kLayoutTiled, 2, m)) << "h200 w4 g128 m=" << m;
    EXPECT_FALSE(prefetch(h200, 4, gemv::kLayoutTiled, 8, m)) << "h200 w4 g32 m=" << m;
  }
}

// The launch's blocks per SM are a ceiling: where a kernel's registers would let the block
// scheduler put more of its blocks on an SM (int8 activations at 72 registers: three blocks of
// 8 warps), the launch pads its dynamic shared memory so that no more fit (smxx_gemv_launch_for,
// docs/kernels/gemv.md v24). Every decoding kernel of Suite 1's gate_up and o at m = 1, 2, 8.
TEST(smxx_gemv, launch_holds_its_blocks_per_sm) {
  LOWBIT_REQUIRE_GPU();
  const cuda::GpuSpec& gpu = cuda::gpu_spec(0);
  int checked = 0;
  for (int64_t n : {int64_t{28672}, int64_t{4096}})
    for (int64_t m : {1, 2, 8})
      for (int bits : {1, 2, 3, 4, 5, 6, 8})
        for (int group : {0, 32, 128})
          for (DType act : {DType::kF16, DType::kBF16, DType::kI8}) {
            if (act == DType::kI8 && bits != 4 && bits != 8) continue;
            Case c;
            c.bits = bits, c.group = group, c.act = act, c.m = m, c.n = n, c.k = 4096;
            const GemmDesc d = desc_of(c);
            if (!cuda::smxx_gemv_can_implement(d, gpu).ok()) continue;
            const gemv::GemvLaunch l = cuda::smxx_gemv_launch_for(d, gpu);
            EXPECT_GE(l.resident_blocks, 1) << d.describe();
            EXPECT_LE(l.resident_blocks, l.blocks_per_sm) << d.describe() << ": " << l.warps << " warps, " << l.smem_bytes
                                                 << " bytes of shared memory";
            ++checked;
          }
  EXPECT_GT(checked, 100);
}

// Through lowbit::Gemm: the selector gives formats the tiled layout does not hold to this
// family, and pack() + run() work end to end.
TEST(smxx_gemv, public_api_selects_gemv) {
  LOWBIT_REQUIRE_GPU();
  for (int bits : {1, 2, 3, 5, 6}) {
    Case c;
    c.bits = bits, c.m = 2, c.n = 512, c.k = 1024;
    const GemmDesc d = desc_of(c);
    Gemm g(d, Device::cuda(0));
    ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
    EXPECT_EQ(g.kernel_name().rfind(cuda::kSmxxGemvName, 0), 0u) << g.kernel_name();
    EXPECT_EQ(g.weight_layout(), gemv_layout_name(bits));
    std::mt19937 rng(g_seed++);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> wf(static_cast<size_t>(c.n * c.k));
    for (float& v : wf) v = normal(rng);
    const IntWeight w = quantize_int(wf.data(), c.n, c.k, d.w.int_format);
    const PackedWeight pw = g.pack(w);
    DeviceBuffer dw(pw.data), ds(pw.scales), dy(static_cast<size_t>(c.m * c.n) * 2);
    const std::vector<float> x = rounded(random_normal(rng, c.m * c.k), DType::kF16);
    DeviceBuffer dx(encode(x, DType::kF16));
    GemmArgs a;
    a.a = dx.get();
    a.w = WeightView{dw.get(), ds.get(), nullptr, nullptr};
    a.out = dy.get();
    DeviceBuffer ws(g.workspace_size());  // the 1- and 2-bit (bit-serial) kernels use one
    StreamHolder s;
    dy.poison(s.get());
    const Status st = g.run(a, ws.get(), s.get());
    ASSERT_TRUE(st.ok()) << st.message();
    s.sync();
    if (g.workspace_size() > 0) {  // without its workspace a run fails with the reason
      const Status none = g.run(a, nullptr, s.get());
      EXPECT_FALSE(none.ok());
      EXPECT_NE(none.message().find("workspace"), std::string::npos) << none.message();
    }
    const std::vector<float> out = decode(dy.download(), DType::kF16, c.m * c.n);
    std::vector<float> ref(out.size());
    const std::vector<float> wd = dequantize(w);
    gemm_nt_reference(x.data(), wd.data(), nullptr, c.m, c.n, c.k, ref.data());
    EXPECT_LE(relative_error(out.data(), ref.data(), static_cast<int64_t>(out.size())), 1e-3) << g.kernel_name();
  }
  {
    // Long k (k >= 2 n, Suite 1's down): the GEMV while its launch stages the activations
    // once (select.cpp gemv_first_long_k), the mixed GEMM above. On a GPU with 227 KB of shared
    // memory per block that is m <= 6 for 4-bit weights (8 warps at m = 6) and m <= 5 for 8-bit;
    // on sm_90 every m up to 8, clusters of blocks splitting k where one block cannot hold
    // them (4-bit from m = 5, 8-bit from m = 3; choose_gemv_launch).
    Case lk;
    lk.n = 4096, lk.k = 14336;
    const cuda::GpuSpec& gpu = cuda::gpu_spec(0);
    const bool big_smem = gpu.smem_per_sm >= 228 * 1024, clusters = gpu.cc >= 90;
    for (auto [bits, m] : {std::pair{4, 1}, std::pair{4, 3}, std::pair{4, 5}, std::pair{4, 6}, std::pair{4, 7},
                           std::pair{4, 8}, std::pair{8, 2}, std::pair{8, 3}, std::pair{8, 5}, std::pair{8, 6},
                           std::pair{8, 8}}) {
      lk.bits = bits, lk.m = m, lk.group = bits == 8 ? 0 : 128;
      const GemmDesc d = desc_of(lk);
      const gemv::GemvLaunch l = cuda::smxx_gemv_launch_for(d, gpu);
      const bool once = l.x_mode == gemv::kGemvXOnce;
      if (big_smem) {
        EXPECT_EQ(once, clusters || m <= (bits == 4 ? 6 : 5)) << "w" << bits << " m=" << m;
        EXPECT_EQ(l.ksplit > 1, clusters && m >= (bits == 8 ? 3 : 5)) << "w" << bits << " m=" << m;
      }
      Gemm g(d, Device::cuda(0));
      // 8-bit at m = 8 with the k split over a cluster: sm80_mixed_gemm (select.cpp
      // mixed_first_w8_m5_to_8; at m = 5..7 only from 7168 channels, below).
      const bool gemv = once && !(bits == 8 && m == 8 && l.ksplit > 1);
      EXPECT_EQ(g.kernel_name().rfind(gemv ? cuda::kSmxxGemvName : "sm80_mixed_gemm", 0), 0u)
          << "w" << bits << " m=" << m << ": " << g.kernel_name();
    }
    // 8-bit symmetric, per-channel or g128, m = 5..8, layers of 7168 channels or more: the
    // mixed GEMM wherever the GEMV would split k over a cluster (session 64, H200: per-channel
    // 8192 x 8192 splits from m = 6, g128 from m = 5); narrower layers keep the GEMV below m = 8.
    struct Shape {
      int64_t n, k;
    };
    // Below m = 8 not where sm80's plan is t16 in one split (10240 x 8192 on a 132-SM GPU).
    // Where the GEMV does not split k (per-channel at m = 5), the mixed GEMM only where sm80's plan
    // is t16 in two or more splits over k >= 5120 (session 65: 7168 x 5120 and 8192 x 8192 on
    // the mixed GEMM, 8192 x 4096 and 9216 x 5120 on the GEMV at m = 5 on a 132-SM GPU).
    for (const Shape& sh : {Shape{8192, 8192}, Shape{5120, 13824}, Shape{10240, 8192}, Shape{7168, 5120},
                            Shape{8192, 4096}, Shape{9216, 5120}})
      for (int group : {0, 128})
        for (int64_t m = 5; m <= 8; ++m) {
          lk.bits = 8, lk.m = m, lk.group = group, lk.n = sh.n, lk.k = sh.k;
          const GemmDesc d = desc_of(lk);
          const gemv::GemvLaunch l = cuda::smxx_gemv_launch_for(d, gpu);
          if (clusters && sh.n == 8192 && sh.k == 8192) EXPECT_EQ(l.ksplit > 1, group == 128 || m >= 6) << "g" << group << " m=" << m;
          const cuda::MixedGemmPlan pl = cuda::sm80_mixed_gemm_plan(d, gpu);
          const bool t16 = std::string(cuda::kMixedGemmConfigs[pl.config].tag) == "t16";
          const bool lone_t16 = t16 && pl.splits == 1;
          if (gpu.sm_count == 132 && (sh.n == 10240 || (sh.n == 9216 && m == 5))) EXPECT_TRUE(lone_t16) << pl.describe();
          if (gpu.sm_count == 132 && clusters && group == 0 && m == 5 && (sh.n == 7168 || sh.n == 8192)) {
            EXPECT_EQ(l.ksplit, 1) << sh.n << "x" << sh.k;
            EXPECT_TRUE(t16 && pl.splits == 2) << sh.n << "x" << sh.k << ": " << pl.describe();
          }
          const bool mixed = l.ksplit > 1 ? (m == 8 || (sh.n >= 7168 && !lone_t16))
                                           : (sh.n >= 7168 && t16 && pl.splits >= 2 && sh.k >= 5120);
          Gemm g(d, Device::cuda(0));
          EXPECT_EQ(g.kernel_name().rfind(mixed ? "sm80_mixed_gemm" : cuda::kSmxxGemvName, 0), 0u)
              << sh.n << "x" << sh.k << " g" << group << " m=" << m << ": " << g.kernel_name();
        }
  }
  Case big;  // m > 8 is not the GEMV's
  big.bits = 3, big.m = 9;
  EXPECT_FALSE(cuda::smxx_gemv_can_implement(desc_of(big), cuda::gpu_spec(0)).ok());
  // The copies' 32-bit address factors (v8): n < 2^28, with the reason.
  Case wide;
  wide.bits = 3, wide.n = int64_t{1} << 28, wide.k = 256;
  const Status st = cuda::smxx_gemv_can_implement(desc_of(wide), cuda::gpu_spec(0));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("n < 2^28"), std::string::npos) << st.message();
  wide.n = (int64_t{1} << 28) - 16;
  EXPECT_TRUE(cuda::smxx_gemv_can_implement(desc_of(wide), cuda::gpu_spec(0)).ok())
      << cuda::smxx_gemv_can_implement(desc_of(wide), cuda::gpu_spec(0)).message();
}

// Through lowbit::Gemm with GPTQ / AWQ-style formats (4 / 8 bits, symmetric or integer zeros):
// m <= 8 selects this family reading the tiled layout, m = 9 and 32 a mixed GEMM, all with the
// same weight_layout(), and weights packed ONCE (by the m = 1 Gemm) give the reference result
// in every one of them (m = 1, 2: activations read directly; 3, 8: staged). Long k (k >= 2 n)
// at m <= 4 stays with the mixed GEMM (select.cpp).
TEST(smxx_gemv, public_api_tiled_weights_packed_once_serve_every_m) {
  LOWBIT_REQUIRE_GPU();
  for (int bits : {4, 8})
    for (ZeroPoint z : {ZeroPoint::kSymmetric, ZeroPoint::kInteger}) {
      Case c;
      c.bits = bits, c.zero = z, c.group = bits == 4 ? 128 : 0, c.n = 1024, c.k = 1024;
      c.act = c.out = c.scale_dtype = bits == 8 && z == ZeroPoint::kInteger ? DType::kBF16 : DType::kF16;
      c.m = 1;
      const GemmDesc d1 = desc_of(c);
      Gemm g1(d1, Device::cuda(0));
      ASSERT_TRUE(g1.can_implement().ok()) << g1.can_implement().message();
      EXPECT_EQ(g1.kernel_name().rfind(cuda::kSmxxGemvName, 0), 0u) << g1.kernel_name();
      EXPECT_EQ(g1.weight_layout(), tiled_layout_name(bits));
      std::mt19937 rng(g_seed++);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      std::vector<float> wf(static_cast<size_t>(c.n * c.k));
      for (float& v : wf) v = normal(rng) + (z == ZeroPoint::kSymmetric ? 0.0f : 0.25f);
      const IntWeight w = quantize_int(wf.data(), c.n, c.k, d1.w.int_format);
      const PackedWeight pw = g1.pack(w);
      DeviceBuffer dw(pw.data), ds(pw.scales), dz;
      if (!pw.zeros.empty()) dz = DeviceBuffer(pw.zeros);
      const std::vector<float> wd = dequantize(w);
      for (int64_t m : {1, 2, 3, 8, 9, 32}) {
        GemmDesc d = d1;
        d.m = m;
        Gemm g(d, Device::cuda(0));
        ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
        EXPECT_EQ(g.weight_layout(), g1.weight_layout()) << d.describe();
        EXPECT_EQ(g.kernel_name().rfind(cuda::kSmxxGemvName, 0) == 0, m <= 8) << d.describe() << " " << g.kernel_name();
        const std::vector<float> x = rounded(random_normal(rng, m * c.k), c.act);
        DeviceBuffer dx(encode(x, c.act)), dy(static_cast<size_t>(m * c.n) * dtype_size(c.out));
        DeviceBuffer ws(std::max<size_t>(g.workspace_size(), 16));
        GemmArgs a;
        a.a = dx.get();
        a.w = WeightView{dw.get(), ds.get(), dz.get(), nullptr};
        a.out = dy.get();
        StreamHolder s;
        dy.poison(s.get());
        const Status st = g.run(a, ws.get(), s.get());
        ASSERT_TRUE(st.ok()) << st.message();
        s.sync();
        const std::vector<float> out = decode(dy.download(), c.out, m * c.n);
        std::vector<float> ref(out.size());
        gemm_nt_reference(x.data(), wd.data(), nullptr, m, c.n, c.k, ref.data());
        EXPECT_LE(relative_error(out.data(), ref.data(), static_cast<int64_t>(out.size())), tolerance(c.act, c.out))
            << d.describe() << " " << g.kernel_name();
      }
    }
}

}  // namespace
}  // namespace lowbit::test
