// Tests of the Hopper mixed GEMM family (src/cuda/mixed_gemm/sm90_mixed_gemm*): every format
// x dtype against the CPU reference on the same quantized operands, M / N / K edges (token
// tiles cut by m, a 64-channel tail tile, one k block), every token tile with several
// split counts, the stream-K tail, bias, poisoned outputs, CUDA-graph capture, determinism, the
// selection rule, and the refusals of can_implement(). Skips without a Hopper GPU and sm_90a code.
//
// LOWBIT_TEST_SMALL=1 shrinks every sweep (for compute-sanitizer runs).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api/gemm_impl.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/mixed_gemm/sm90_mixed_gemm_family.hpp"
#include "cuda/mixed_gemm/sm90_mixed_gemm_params.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/pack.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"
#include "test_gpu_common.hpp"
#include "test_mixed_gemm_common.hpp"

namespace {

using namespace lowbit;
using namespace lowbit::test;
using namespace lowbit::test::mixed;
using cuda::Sm90MixedPlan;

uint32_t g_seed = 91000;

bool sm90a_available() {
  const cuda::GpuSpec& g = cuda::gpu_spec(0);
  return cuda::sm90_mixed_gemm_runs_on(g).ok();
}

#define REQUIRE_SM90A()                                                        \
  do {                                                                         \
    LOWBIT_REQUIRE_GPU();                                                      \
    if (!sm90a_available()) GTEST_SKIP() << "needs a Hopper GPU and sm_90a code"; \
  } while (0)

struct Case {
  IntWeightFormat f;
  int64_t m = 1, n = 128, k = 64;
  bool bias = false;
  bool uniform_act = true;  // act-order: a shuffled uniform g_idx (GPTQ's), else any group per column
  std::optional<Sm90MixedPlan> plan;
  DType act() const { return f.scale_dtype; }
  std::string text() const {
    std::ostringstream s;
    s << "m=" << m << " n=" << n << " k=" << k << " " << f.name() << " " << dtype_name(act()) << (bias ? " +bias" : "")
      << (f.act_order ? (uniform_act ? " g_idx=uniform" : " g_idx=any") : "");
    if (plan) s << " plan=" << plan->config << "/" << plan->splits << " pre=" << plan->pre_stages;
    return s.str();
  }
};

GemmDesc desc_of(const Case& c) {
  GemmDesc d;
  d.m = c.m;
  d.n = c.n;
  d.k = c.k;
  d.a.dtype = c.act();
  d.w = WeightFormat::integer(c.f);
  d.out_dtype = c.act();
  d.has_bias = c.bias;
  return d;
}

struct Problem {
  IntWeight w;
  std::vector<float> a, bias, ref;
};

Problem make_problem(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  Problem p;
  p.w = random_weight(c.f, c.n, c.k, rng, c.uniform_act);
  p.a = rounded(random_normal(rng, c.m * c.k), c.act());
  if (c.bias) p.bias = rounded(random_normal(rng, c.n, 0.5f), c.act());
  const std::vector<float> wd = dequantize(p.w);
  p.ref.resize(static_cast<size_t>(c.m * c.n));
  gemm_nt_reference(p.a.data(), wd.data(), c.bias ? p.bias.data() : nullptr, c.m, c.n, c.k, p.ref.data());
  return p;
}

std::unique_ptr<detail::GemmImpl> make_impl(const GemmDesc& d, const std::optional<Sm90MixedPlan>& plan) {
  const cuda::GpuSpec& gpu = cuda::gpu_spec(0);
  throw_if_error(cuda::sm90_mixed_gemm_can_implement(d, gpu));
  return plan ? cuda::sm90_mixed_gemm_make_with_plan(d, gpu, *plan) : cuda::sm90_mixed_gemm_make(d, gpu);
}

// Everything one case needs on the device.
struct Prepared {
  Case c;
  Problem pr;
  std::unique_ptr<detail::GemmImpl> impl;
  PackedWeight packed;
  DeviceBuffer data, scales, zeros, index, a, bias, out, ws;
  explicit Prepared(const Case& cs)
      : c(cs), pr(make_problem(cs, ++g_seed)), impl(make_impl(desc_of(cs), cs.plan)), packed(impl->pack(pr.w)),
        data(packed.data), scales(packed.scales), zeros(packed.zeros), index(packed.index), a(encode(pr.a, cs.act())),
        bias(cs.bias ? DeviceBuffer(encode(pr.bias, cs.act())) : DeviceBuffer(0)),
        out(static_cast<size_t>(cs.m * cs.n) * dtype_size(cs.act())), ws(impl->workspace_size()) {}
  GemmArgs args() const {
    GemmArgs g;
    g.a = a.get();
    g.w.data = data.get();
    g.w.scales = scales.get();
    g.w.zeros = zeros.get();
    g.w.index = index.get();
    g.bias = c.bias ? bias.get() : nullptr;
    g.out = out.get();
    return g;
  }
  std::vector<uint8_t> run(cudaStream_t s) {
    out.poison(s);
    const Status st = impl->run(args(), ws.get(), s);
    EXPECT_TRUE(st.ok()) << st.message();
    LOWBIT_CUDA_CHECK(cudaStreamSynchronize(s));
    return out.download();
  }
  std::string what() const { return c.text() + " kernel=" + impl->name() + " seed=" + std::to_string(g_seed); }
};

void check_case(const Case& c) {
  Prepared p(c);
  StreamHolder s;
  const std::vector<float> got = decode(p.run(s.get()), c.act(), c.m * c.n);
  size_t bad = 0, zeros = 0;
  for (float v : got) {
    bad += std::isfinite(v) ? 0 : 1;
    zeros += v == 0.0f ? 1 : 0;
  }
  EXPECT_EQ(bad, 0u) << "non-finite (unwritten) outputs: " << p.what();
  EXPECT_LT(zeros, got.size()) << "all outputs zero: " << p.what();
  EXPECT_LE(relative_error(got.data(), p.pr.ref.data(), c.m * c.n), tolerance(c.act())) << p.what();
}

void sweep(DType t) {
  int i = 0;
  const std::vector<int64_t> ms = small_mode() ? std::vector<int64_t>{1, 130} : std::vector<int64_t>{1, 65, 130, 300};
  for (const IntWeightFormat& f : formats_for(t))
    for (int64_t m : ms) {
      Case c;
      c.f = f;
      c.m = m;
      c.n = 192;  // a 64-channel tail tile
      c.k = 640;  // 10 k blocks
      c.bias = (i++ % 2) == 0;
      check_case(c);
    }
}

TEST(sm90_mixed_gemm, every_format_fp16) {
  REQUIRE_SM90A();
  sweep(DType::kF16);
}

TEST(sm90_mixed_gemm, every_format_bf16) {
  REQUIRE_SM90A();
  sweep(DType::kBF16);
}

// Act-order weights (GPTQ g_idx): the activations gathered into the packed column order and the
// tensor maps re-extented on the device to k' (docs/kernels/mixed_gemm.md, "Act-order"). A uniform
// g_idx keeps k' = k; any other cuts groups into padded runs, so k' > k, with groups of 64 also an
// odd multiple of 64 (a 128-column stage half past k'). Every token tile, with splits, both
// dtypes and widths, zero points, bias; against the CPU reference of the unpermuted weights.
TEST(sm90_mixed_gemm, act_order_any_g_idx) {
  REQUIRE_SM90A();
  int i = 0, ran = 0;
  for (DType t : {DType::kF16, DType::kBF16})
    for (int bits : {4, 8})
      for (int group : {32, 64, 128})
        for (bool uniform : {true, false})
          for (int cfg = 0; cfg < cuda::kSm90MixedConfigCount; ++cfg) {
            if (small_mode() && (group == 64 || cfg == 2 || t == DType::kBF16)) continue;
            if (!cuda::sm90_mixed_has_kernel(cuda::kSm90MixedConfigs[cfg], t == DType::kBF16, bits)) continue;
            Case c;
            c.f = fmt(bits, group, (i % 3) == 0 ? ZeroPoint::kInteger : ZeroPoint::kSymmetric, t, true);
            c.m = (i % 2) == 0 ? 37 : cuda::kSm90MixedConfigs[cfg].block_tokens + 3;
            c.n = 320;  // two 128-channel tiles and a 64-channel one
            c.k = 1152;  // 18 k blocks of 64, 9 of 128
            c.uniform_act = uniform;
            c.bias = (i % 2) == 1;
            c.plan = Sm90MixedPlan{cfg, 1 + (i % 3), ""};
            ++i;
            check_case(c);
            ++ran;
          }
  EXPECT_GT(ran, 0);
  // The family's own plan (no forced one), groups cut into runs.
  Case c;
  c.f = fmt(4, 128, ZeroPoint::kSymmetric, DType::kF16, true);
  c.m = 200;
  c.n = 256;
  c.k = 1024;
  c.uniform_act = false;
  check_case(c);
}

// The act-order gather's forms (sm80_mixed_gemm_aux.cu: staged rows in column chunks, session 66's
// element-per-thread form below m = 256, each with and without PDL for it and the maps kernel) give
// the same bytes: the gather is exact. Then back-to-back calls on
// one stream, two activation inputs alternating, no synchronization between them: with PDL the
// next call's maps kernel and gather start while this call's GEMM reads the maps and the gathered
// rows, so they must write only after their griddepcontrol.wait; every output equals its single
// call's bytes. (The GEMM itself runs without PDL for act-order weights: sm90_mixed_gemm_family.cpp.)
TEST(sm90_mixed_gemm, act_order_gather_forms_and_back_to_back) {
  REQUIRE_SM90A();
  for (int64_t m : {5, 37, 300}) {
    Case c;
    c.f = fmt(4, 128, ZeroPoint::kInteger, DType::kF16, true);
    c.m = m;
    c.n = 256;
    c.k = 1024;
    c.uniform_act = false;  // k' > k: chunks past k (sized on k) do work too
    Prepared p(c);
    StreamHolder s;
    const std::vector<uint8_t> base = p.run(s.get());
    const std::vector<float> got = decode(base, c.act(), c.m * c.n);
    EXPECT_LE(relative_error(got.data(), p.pr.ref.data(), c.m * c.n), tolerance(c.act())) << p.what();
    const GemmDesc d = desc_of(c);
    for (const char* form : {"0", "1"})
      for (const char* pdl : {"0", "1"}) {
        ScopedEnv f("LOWBIT_MIXED_ACT_GATHER", form), g("LOWBIT_MIXED_ACT_PDL", pdl);
        p.impl = make_impl(d, c.plan);
        EXPECT_EQ(p.run(s.get()), base) << p.what() << " gather form " << form << " pdl " << pdl;
      }
    p.impl = make_impl(d, c.plan);
    std::mt19937 rng(++g_seed);
    DeviceBuffer a2(encode(rounded(random_normal(rng, c.m * c.k), c.act()), c.act()));
    GemmArgs alt = p.args();
    alt.a = a2.get();
    p.out.poison(s.get());
    ASSERT_TRUE(p.impl->run(alt, p.ws.get(), s.get()).ok());
    LOWBIT_CUDA_CHECK(cudaStreamSynchronize(s.get()));
    const std::vector<uint8_t> base2 = p.out.download();
    constexpr int kCalls = 6;
    std::vector<DeviceBuffer> outs;
    for (int i = 0; i < kCalls; ++i) outs.emplace_back(static_cast<size_t>(c.m * c.n) * dtype_size(c.act()));
    for (int i = 0; i < kCalls; ++i) {
      GemmArgs g = (i % 2) == 0 ? p.args() : alt;
      g.out = outs[i].get();
      ASSERT_TRUE(p.impl->run(g, p.ws.get(), s.get()).ok());
    }
    LOWBIT_CUDA_CHECK(cudaStreamSynchronize(s.get()));
    for (int i = 0; i < kCalls; ++i) EXPECT_EQ(outs[i].download(), (i % 2) == 0 ? base : base2) << p.what() << " call " << i;
  }
}

// Every token tile with several split counts (odd and even k-block counts per split, a
// split of one k block): the heuristic may pick any of them.
TEST(sm90_mixed_gemm, every_config_and_split) {
  REQUIRE_SM90A();
  const std::vector<int> splits = small_mode() ? std::vector<int>{1, 3} : std::vector<int>{1, 2, 3, 5, 17};
  for (int cfg = 0; cfg < cuda::kSm90MixedConfigCount; ++cfg)
    for (int s : splits)
      for (DType t : {DType::kF16, DType::kBF16}) {
        Case c;
        c.f = fmt(4, 32, ZeroPoint::kInteger, t);
        c.m = small_mode() ? 70 : 300;
        c.n = 320;
        c.k = 1088;  // 17 k blocks of 64 (8.5 of 128: the last stage half outside k)
        c.bias = true;
        const int64_t blocks = cuda::sm90_mixed_k_blocks(cuda::kSm90MixedConfigs[cfg], c.k);
        c.plan = Sm90MixedPlan{cfg, static_cast<int>(std::min<int64_t>(s, blocks)), ""};
        check_case(c);
        c.f = fmt(8, 0, ZeroPoint::kSymmetric, t);
        c.m = 5;
        // (bf16 x 8-bit has no c128t128k128 kernel: refused, see can_implement_refusals_name_the_reason.)
        if (cuda::sm90_mixed_has_kernel(cuda::kSm90MixedConfigs[cfg], t == DType::kBF16, 8)) check_case(c);
      }
  // The cap on the stages requested before griddepcontrol.wait (the plan's default is
  // kSm90MixedPreWaitStages): every stage (0), one, and more than the ring holds, with units of
  // fewer and more k blocks than the cap (one and three splits of 17 k blocks).
  for (int cfg = 0; cfg < cuda::kSm90MixedConfigCount; ++cfg)
    for (int pre : {0, 1, 64})
      for (int s : {1, 3}) {
        Case c;
        c.f = fmt(4, 32, ZeroPoint::kInteger, DType::kF16);
        c.m = small_mode() ? 70 : 300;
        c.n = 320;
        c.k = 1088;
        c.bias = true;
        c.plan = Sm90MixedPlan{cfg, s, ""};
        c.plan->pre_stages = pre;
        check_case(c);
      }
}

// Stages of 128 columns (c128t64k128, the plan's tile at m <= 64, and the c128t128k128 probe):
// every format, a k of whole stages and one whose last stage is half outside k (groups of 32 /
// 64 and per-channel; groups of 128 need k in multiples of 128), one and three splits, one
// token more than a tile (a second, nearly empty token tile).
TEST(sm90_mixed_gemm, stages_of_128_columns) {
  REQUIRE_SM90A();
  int i = 0, configs = 0;
  for (int cfg = 0; cfg < cuda::kSm90MixedConfigCount; ++cfg) {
    if (cuda::kSm90MixedConfigs[cfg].block_k != 128) continue;
    ++configs;
    for (DType t : {DType::kF16, DType::kBF16})
      for (const IntWeightFormat& f : formats_for(t))
        for (int64_t k : {640, 576})
          for (int s : {1, 3}) {
            if (k % std::max(f.group_size, 1) != 0) continue;
            if (!cuda::sm90_mixed_has_kernel(cuda::kSm90MixedConfigs[cfg], t == DType::kBF16, f.bits)) continue;
            if (small_mode() && (i++ % 3) != 0) continue;
            Case c;
            c.f = f;
            c.m = cuda::kSm90MixedConfigs[cfg].block_tokens + 1;
            c.n = 192;
            c.k = k;
            c.bias = (k == 640);
            c.plan = Sm90MixedPlan{cfg, s, ""};
            check_case(c);
          }
  }
  EXPECT_GE(configs, 1);
}

TEST(sm90_mixed_gemm, edges) {
  REQUIRE_SM90A();
  struct E {
    int64_t m, n, k;
  };
  std::vector<E> es = {{1, 64, 64}, {257, 64, 64}, {513, 448, 128}, {64, 128, 4160}, {100, 4160, 256}};
  if (small_mode()) es.resize(3);
  for (const E& e : es)
    for (int bits : {4, 8}) {
      Case c;
      c.f = fmt(bits, 64, ZeroPoint::kInteger, DType::kF16);
      c.m = e.m;
      c.n = e.n;
      c.k = e.k;
      c.bias = true;
      check_case(c);
    }
}

std::vector<Case> execution_cases() {
  std::vector<Case> v;
  Case c;
  c.f = fmt(4, 128, ZeroPoint::kSymmetric, DType::kF16);
  c.m = 200;
  c.n = 256;
  c.k = 1024;
  c.bias = true;
  v.push_back(c);
  c.plan = Sm90MixedPlan{1, 3, ""};  // split-K: workspace + reduce
  c.f = fmt(8, 0, ZeroPoint::kInteger, DType::kBF16);
  v.push_back(c);
  c.plan = Sm90MixedPlan{2, 1, ""};
  c.f = fmt(4, 32, ZeroPoint::kInteger, DType::kBF16);
  c.m = 513;
  v.push_back(c);
  return v;
}

// One prepared case as the shared execution-property checks take it (test_gpu_common.hpp).
PreparedCall call_of(Prepared& p) {
  return PreparedCall{[&p](cudaStream_t s) { return p.run(s); },
                      [&p](cudaStream_t s) { return p.impl->run(p.args(), p.ws.get(), s); }, &p.out, p.what()};
}

TEST(sm90_mixed_gemm, deterministic_bit_for_bit) {
  REQUIRE_SM90A();
  for (const Case& c : execution_cases()) {
    Prepared p(c);
    expect_bitwise_repeatable(call_of(p));
  }
}

TEST(sm90_mixed_gemm, cuda_graph_capture) {
  REQUIRE_SM90A();
  for (const Case& c : execution_cases()) {
    Prepared p(c);
    expect_graph_replays_match(call_of(p));
  }
}

TEST(sm90_mixed_gemm, two_streams_concurrently) {
  REQUIRE_SM90A();
  std::vector<Case> cases = execution_cases();
  Prepared p0(cases[0]), p1(cases[1]), p2(cases[2]);
  expect_two_streams_match(call_of(p0), call_of(p1), call_of(p2));
}

// Stream-K tail (sm90 v23): the whole waves of channel tiles as units, the rest's (tile, k
// block) iterations in even shares over the grid, the pieces summed by the reduce kernel. Small
// grids (the plan's sk_grid, not the SM count) so that the shapes stay small: a tail of one
// tile over several CTAs, shares that cross tile boundaries (more than one tail tile per CTA),
// a 64-channel last tile, exactly one iteration per CTA, 64- and 128-column stages, per-channel
// (scaled in the reduce) and grouped weights, zero points, bias; every case against the CPU
// reference, one twice for bit-identical results.
TEST(sm90_mixed_gemm, stream_k_tail) {
  REQUIRE_SM90A();
  struct Shape {
    int64_t n, k;
    int grid;
  };
  const std::vector<Shape> shapes = small_mode()
                                        ? std::vector<Shape>{{896, 640, 3}, {448, 1088, 7}}
                                        : std::vector<Shape>{{896, 640, 3},  {448, 640, 5},  {1920, 640, 13}, {640, 256, 4},
                                                             {640, 640, 2},  {1024, 640, 3}, {448, 1088, 7},  {384, 1088, 7}};
  int i = 0, ran = 0;
  for (int cfg = 0; cfg < cuda::kSm90MixedConfigCount; ++cfg) {
    const cuda::Sm90MixedConfig& conf = cuda::kSm90MixedConfigs[cfg];
    if (!cuda::sm90_mixed_tail_config(conf)) continue;
    for (const Shape& sh : shapes) {
      const int64_t k_blocks = cuda::sm90_mixed_k_blocks(conf, sh.k);
      if (!cuda::sm90_mixed_tail((sh.n + 127) / 128, k_blocks, sh.grid).valid) continue;
      const DType t = (i % 2) == 0 ? DType::kF16 : DType::kBF16;
      const std::vector<IntWeightFormat> fs = {fmt(4, 128, ZeroPoint::kSymmetric, t), fmt(8, 0, ZeroPoint::kSymmetric, t),
                                               fmt(4, 32, ZeroPoint::kInteger, t)};
      // The next format in turn that k and the configuration take.
      std::optional<IntWeightFormat> pick;
      for (size_t d = 0; d < fs.size() && !pick; ++d) {
        const IntWeightFormat& f = fs[(i + d) % fs.size()];
        if (sh.k % std::max(f.group_size, 1) == 0 && cuda::sm90_mixed_has_kernel(conf, t == DType::kBF16, f.bits)) pick = f;
      }
      ++i;
      if (!pick) continue;
      const IntWeightFormat f = *pick;
      for (int64_t m : {int64_t{1}, int64_t{37}, int64_t{conf.block_tokens}}) {
        if (small_mode() && m == 37) continue;
        Case c;
        c.f = f;
        c.m = m;
        c.n = sh.n;
        c.k = sh.k;
        c.bias = (m != 37);
        c.plan = Sm90MixedPlan{cfg, 1, ""};
        c.plan->sk_grid = sh.grid;
        check_case(c);
        ++ran;
      }
    }
  }
  EXPECT_GT(ran, 0);
  // bf16 x 8-bit on the 128-token tile in 64-column stages, decoded by halves (the plan's tile
  // for it at m = 65..128, where the tail rule applies since v24), with a tail over 3 CTAs.
  {
    Case h;
    h.f = fmt(8, 0, ZeroPoint::kSymmetric, DType::kBF16);
    h.m = 100;
    h.n = 896;
    h.k = 640;
    h.bias = true;
    h.plan = Sm90MixedPlan{1, 1, ""};
    h.plan->sk_grid = 3;
    ASSERT_STREQ(cuda::kSm90MixedConfigs[1].tag, "c128t128");
    check_case(h);
  }
  Case c;
  c.f = fmt(4, 32, ZeroPoint::kInteger, DType::kF16);
  c.m = 40;
  c.n = 448;
  c.k = 1088;
  c.bias = true;
  c.plan = Sm90MixedPlan{3, 1, ""};
  c.plan->sk_grid = 7;
  Prepared p(c);
  EXPECT_NE(p.impl->name().find("_sk"), std::string::npos) << p.impl->name();
  expect_bitwise_repeatable(call_of(p));
}

// A stream-K tail the family cannot run is refused with the reason: the 256-token tile, more
// than one token tile, a split, fewer tail iterations than CTAs.
TEST(sm90_mixed_gemm, stream_k_tail_refusals) {
  REQUIRE_SM90A();
  Case c;
  c.f = fmt(4, 128, ZeroPoint::kSymmetric, DType::kF16);
  c.m = 64;
  c.n = 896;
  c.k = 640;
  auto refused = [&](const Case& cs, int config, int splits, int grid) {
    Sm90MixedPlan pl{config, splits, ""};
    pl.sk_grid = grid;
    try {
      make_impl(desc_of(cs), pl);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(refused(c, 3, 1, 3), "");  // 7 tiles: 6 whole, one in the tail over 3 CTAs
  EXPECT_NE(refused(c, 2, 1, 3).find("stream-K tail"), std::string::npos);   // c128t256
  EXPECT_NE(refused(c, 3, 2, 3).find("stream-K tail"), std::string::npos);   // a split
  EXPECT_NE(refused(c, 3, 1, 7).find("stream-K tail"), std::string::npos);   // no tail tile (7 of 7 whole)
  EXPECT_NE(refused(c, 3, 1, 6).find("stream-K tail"), std::string::npos);   // 5 tail iterations < 6 CTAs
  Case tall = c;
  tall.m = 65;
  EXPECT_NE(refused(tall, 3, 1, 3).find("stream-K tail"), std::string::npos);  // two token tiles
  EXPECT_NE(refused(c, 3, 1, -1).find("stream-K grid"), std::string::npos);
}

// The public API picks this family from m = 17 on for 8-bit weights and from m = 33 on for
// 4-bit weights (with one exception below), sm80_mixed_gemm below (select.cpp), act-order weights
// too (since session 66; below m = 33 they stay with sm80_mixed_gemm).
TEST(sm90_mixed_gemm, public_api_selection) {
  REQUIRE_SM90A();
  for (int bits : {4, 8})
    for (int64_t m : {16, 17, 32, 33, 4096}) {
      Case c;
      c.f = fmt(bits, 128, ZeroPoint::kSymmetric, DType::kF16);
      c.m = m;
      c.n = 256;
      c.k = 1024;
      Gemm g(desc_of(c), Device::cuda(0));
      ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
      const char* want = m >= (bits == 4 ? 33 : 17) ? "sm90_mixed_gemm" : "sm80_mixed_gemm";
      EXPECT_EQ(g.kernel_name().rfind(want, 0), 0u) << "bits=" << bits << " m=" << m << ": " << g.kernel_name();
      EXPECT_EQ(g.weight_layout(), bits == 4 ? "tiled_w4_v1" : "tiled_w8_v1");
    }
  // The exception (session 63): 4-bit at m = 17..32 where sm80's t32 plan leaves about one CTA
  // per SM over splits of 4096 k or more (Suite 1's down) goes to this family.
  struct Shape {
    int64_t n, k;
    bool sm90;
  };
  for (int64_t m : {17, 24, 32})
    for (const Shape& sh : {Shape{4096, 14336, true}, Shape{5120, 13824, true}, Shape{10240, 8192, true},
                            Shape{4096, 4096, false}, Shape{8192, 28672, false}, Shape{3584, 18944, false}}) {
      Case c;
      c.f = fmt(4, 128, ZeroPoint::kSymmetric, DType::kF16);
      c.m = m, c.n = sh.n, c.k = sh.k;
      Gemm g(desc_of(c), Device::cuda(0));
      const char* want = sh.sm90 ? "sm90_mixed_gemm" : "sm80_mixed_gemm";
      EXPECT_EQ(g.kernel_name().rfind(want, 0), 0u) << "m=" << m << " " << sh.n << "x" << sh.k << ": " << g.kernel_name();
    }
  // And 8-bit at m = 17..32 where sm80's t32 plan splits k in two or more over at most 8 stages
  // each, one CTA per SM (session 63: 3072 x 3072, 3584 x 3584, Suite 1's o) goes to sm80.
  for (int64_t m : {17, 24, 32})
    for (const Shape& sh : {Shape{3072, 3072, false}, Shape{3584, 3584, false}, Shape{4096, 4096, false},
                            Shape{3072, 8192, true}, Shape{4608, 3584, true}, Shape{6144, 4096, true},
                            Shape{4096, 14336, true}, Shape{28672, 4096, true}}) {
      Case c;
      c.f = fmt(8, 0, ZeroPoint::kSymmetric, DType::kF16);
      c.m = m, c.n = sh.n, c.k = sh.k;
      Gemm g(desc_of(c), Device::cuda(0));
      const char* want = sh.sm90 ? "sm90_mixed_gemm" : "sm80_mixed_gemm_f16_w8_t32_s2";
      EXPECT_EQ(g.kernel_name().rfind(want, 0), 0u) << "w8 m=" << m << " " << sh.n << "x" << sh.k << ": " << g.kernel_name();
    }
  Case c;
  c.f = fmt(4, 128, ZeroPoint::kSymmetric, DType::kF16);
  c.f.act_order = true;
  c.n = 256;
  c.k = 1024;
  for (int64_t m : {16, 1000}) {
    c.m = m;
    Gemm g(desc_of(c), Device::cuda(0));
    ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
    const char* want = m > 16 ? "sm90_mixed_gemm" : "sm80_mixed_gemm";
    EXPECT_EQ(g.kernel_name().rfind(want, 0), 0u) << "act-order m=" << m << ": " << g.kernel_name();
  }
}

// The plan's choices where the Suite-1 plan sweep (H200, W4 g128 f16, lowbit bench with
// LOWBIT_SM90_MIXED_PLAN, docs/kernels/mixed_gemm.md sm90 v15, v17, v18) ranked them: no GPU
// needed. m = 33 / 64: the 64-token tile in 128-column stages (v17: faster than 64-column stages
// on 18 of 24 layer x m points; W4 g128 f16 at m = 64 qkv s2 / o s4 / gate_up s1 / down s4
// 15.5 / 11.4 / 43.1 / 22.9 us against 16.3 / 11.9 / 44.5 / 23.6), split so that qkv / o / down
// fill the SMs; m = 128: the 128-token tile in 128-column stages (v18: qkv s2 / o s4 / gate_up
// s1 / down s4 19.2 / 14.3 / 59.0 / 31.6 against 20.3 / 14.8 / 62.2 / 33.4 in 64-column stages),
// but not for bf16 x 8-bit (4-6% slower there); m = 256: qkv / o on the 128-token tile in one /
// two splits (v18: 26.7 / 20.4 against 28.6 / 21.2 in 64-column stages and the 256-token tile's
// best 31.3 / 22.3 in v15), gate_up / down on the 256-token tile in one / four splits; m = 4096:
// the 256-token tile without splits.
TEST(sm90_mixed_gemm, plan_follows_measurements) {
  auto plan = [](int64_t m, int64_t n, int64_t k, int bits = 4, bool bf16 = false) {
    const Sm90MixedPlan p = cuda::sm90_mixed_gemm_plan(m, n, k, bits, bf16, 132);
    return std::string(cuda::kSm90MixedConfigs[p.config].tag) + "_s" + std::to_string(p.splits);
  };
  EXPECT_EQ(plan(33, 6144, 4096), "c128t64k128_s2");
  EXPECT_EQ(plan(64, 6144, 4096), "c128t64k128_s2");
  EXPECT_EQ(plan(64, 4096, 4096), "c128t64k128_s4");
  EXPECT_EQ(plan(64, 28672, 4096), "c128t64k128_s1");
  EXPECT_EQ(plan(64, 4096, 14336), "c128t64k128_s4");
  // A k of one 64-column block: the 64-column stages (one 128-column stage would be half empty).
  EXPECT_EQ(plan(64, 4096, 64), "c128t64_s1");
  EXPECT_EQ(plan(128, 6144, 4096), "c128t128k128_s2");
  EXPECT_EQ(plan(128, 4096, 4096), "c128t128k128_s4");
  EXPECT_EQ(plan(128, 28672, 4096), "c128t128k128_s1");
  EXPECT_EQ(plan(128, 4096, 14336), "c128t128k128_s4");
  EXPECT_EQ(plan(128, 6144, 4096, 8, false), "c128t128k128_s2");
  EXPECT_EQ(plan(128, 6144, 4096, 8, true), "c128t128_s2");
  EXPECT_EQ(plan(256, 6144, 4096), "c128t128k128_s1");
  EXPECT_EQ(plan(256, 4096, 4096), "c128t128k128_s2");
  EXPECT_EQ(plan(256, 28672, 4096), "c128t256_s1");
  EXPECT_EQ(plan(256, 4096, 14336), "c128t256_s4");
  for (int64_t n : {6144, 4096, 28672}) EXPECT_EQ(plan(4096, n, 4096), "c128t256_s1") << n;
  EXPECT_EQ(plan(4096, 4096, 14336), "c128t256_s1");
  // The stream-K tail (sm90 v23, v24): one token tile of 64 or 128 with at least one whole wave
  // of channel tiles and a last wave of at most a third of the SMs (132 + 22, 132 + 44 and
  // 2 x 132 + 24 tiles), not Suite 1's gate_up (132 + 92), 132 + 66 tiles, layers of fewer tiles
  // than SMs, nor more than one token tile.
  if (std::getenv("LOWBIT_SM90_MIXED_SK") == nullptr) {
    auto sk = [](int64_t m, int64_t n, int64_t k = 4096) { return cuda::sm90_mixed_gemm_plan(m, n, k, 4, false, 132).sk_grid; };
    EXPECT_EQ(sk(64, 19712), 132);
    EXPECT_EQ(sk(33, 22528), 132);
    EXPECT_EQ(sk(64, 25344), 0);
    EXPECT_EQ(sk(64, 28672), 0);
    EXPECT_EQ(sk(64, 6144), 0);
    EXPECT_EQ(sk(96, 19712), 132);
    EXPECT_EQ(sk(128, 19712, 8192), 132);
    EXPECT_EQ(sk(128, 22528), 132);
    EXPECT_EQ(sk(128, 36864), 132);
    EXPECT_EQ(sk(128, 25344), 0);
    EXPECT_EQ(sk(128, 28672), 0);
    EXPECT_EQ(sk(128, 14336), 0);
    EXPECT_EQ(sk(129, 19712), 0);  // two token tiles
    EXPECT_EQ(plan(64, 19712, 4096), "c128t64k128_s1");
    EXPECT_EQ(plan(128, 19712, 4096), "c128t128k128_s1");
  }
  // Two stages' constants before griddepcontrol.wait (sm90 v11: every stage was 0.8-1.4%
  // slower at m = 64 / 128 on H100), unless LOWBIT_SM90_MIXED_PREWAIT overrides it.
  if (std::getenv("LOWBIT_SM90_MIXED_PREWAIT") == nullptr)
    EXPECT_EQ(cuda::sm90_mixed_gemm_plan(64, 4096, 4096, 4, false, 132).pre_stages, 2);
}

// The last token tile's activation box (sm90 v21): the tile's rows rounded up to 8 where at
// least 3/8 of the tile lies past m, else the full tile (unless LOWBIT_SM90_MIXED_XBOX is set).
TEST(sm90_mixed_gemm, last_tile_box_rule) {
  if (std::getenv("LOWBIT_SM90_MIXED_XBOX") != nullptr) GTEST_SKIP() << "LOWBIT_SM90_MIXED_XBOX is set";
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(65, 128), 72);    // 56 of 128 past m
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(200, 128), 72);   // second tile: 72 rows
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(100, 128), 128);  // 24 of 128 past m
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(128, 128), 128);
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(129, 128), 8);
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(160, 256), 160);  // 96 of 256
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(200, 256), 256);  // 56 of 256
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(300, 256), 48);
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(17, 64), 24);
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(40, 64), 40);     // 24 of 64
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(48, 64), 64);     // 16 of 64
  EXPECT_EQ(cuda::sm90_mixed_x_last_rows(1, 64), 8);
}

TEST(sm90_mixed_gemm, can_implement_refusals_name_the_reason) {
  REQUIRE_SM90A();
  const cuda::GpuSpec& gpu = cuda::gpu_spec(0);
  auto reason = [&](const GemmDesc& d) { return cuda::sm90_mixed_gemm_can_implement(d, gpu).message(); };
  Case c;
  c.f = fmt(4, 128, ZeroPoint::kSymmetric, DType::kF16);
  c.m = 300;
  c.n = 256;
  c.k = 1024;
  GemmDesc d = desc_of(c);
  EXPECT_TRUE(cuda::sm90_mixed_gemm_can_implement(d, gpu).ok());
  GemmDesc bad = d;
  bad.n = 96;
  EXPECT_NE(reason(bad).find("multiple of 64"), std::string::npos) << reason(bad);
  bad = d;
  bad.out_dtype = DType::kBF16;
  EXPECT_NE(reason(bad).find("output dtype"), std::string::npos) << reason(bad);
  bad = d;
  bad.w.int_format.act_order = true;
  bad.w.int_format.group_size = 0;
  EXPECT_NE(reason(bad).find("act-order"), std::string::npos) << reason(bad);
  bad = d;
  bad.w.int_format.bits = 3;
  EXPECT_NE(reason(bad).find("bits=3"), std::string::npos) << reason(bad);
  bad = d;
  bad.w.int_format.zero = ZeroPoint::kFloat;
  EXPECT_NE(reason(bad).find("float zero points"), std::string::npos) << reason(bad);
  // A forced plan outside the table or with more splits than k blocks is refused.
  EXPECT_THROW(cuda::sm90_mixed_gemm_make_with_plan(d, gpu, Sm90MixedPlan{7, 1, ""}), Error);
  EXPECT_THROW(cuda::sm90_mixed_gemm_make_with_plan(d, gpu, Sm90MixedPlan{0, 17, ""}), Error);
  Sm90MixedPlan negative_pre{0, 1, ""};
  negative_pre.pre_stages = -1;
  EXPECT_THROW(cuda::sm90_mixed_gemm_make_with_plan(d, gpu, negative_pre), Error);
  // A configuration without a kernel for the problem (bf16 x 8-bit on c128t128k128) is refused
  // by name, and the plan never picks it, even when LOWBIT_SM90_MIXED_PLAN asks for it.
  Case c8;
  c8.f = fmt(8, 0, ZeroPoint::kSymmetric, DType::kBF16);
  c8.m = 300;
  c8.n = 256;
  c8.k = 1024;
  const GemmDesc w8 = desc_of(c8);
  EXPECT_TRUE(cuda::sm90_mixed_gemm_can_implement(w8, gpu).ok());
  int built = 0;
  for (int cfg = 0; cfg < cuda::kSm90MixedConfigCount; ++cfg) {
    if (cuda::sm90_mixed_has_kernel(cuda::kSm90MixedConfigs[cfg], true, 8)) {
      ++built;
      continue;
    }
    try {
      (void)cuda::sm90_mixed_gemm_make_with_plan(w8, gpu, Sm90MixedPlan{cfg, 1, ""});
      ADD_FAILURE() << "configuration " << cfg << " was built for bf16 x 8-bit";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("has no kernel for bf16"), std::string::npos) << e.what();
    }
    EXPECT_NE(cuda::sm90_mixed_gemm_plan(256, 4096, 4096, 8, true, gpu.sm_count).config, cfg);
    ::setenv("LOWBIT_SM90_MIXED_PLAN", std::to_string(cfg).c_str(), 1);
    EXPECT_NE(cuda::sm90_mixed_gemm_plan(256, 4096, 4096, 8, true, gpu.sm_count).config, cfg);
    ::unsetenv("LOWBIT_SM90_MIXED_PLAN");
  }
  EXPECT_EQ(built, cuda::kSm90MixedConfigCount - 1);
  // Misaligned operands are refused by run(), not faulted on.
  Prepared p(c);
  GemmArgs args = p.args();
  args.a = static_cast<const char*>(args.a) + 2;
  const Status s = p.impl->run(args, p.ws.get(), nullptr);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("16-byte aligned"), std::string::npos) << s.message();
}

}  // namespace
