// The CUDA kernel families of this build and the rules that pick one for a problem.
//
// Two parts, kept apart on purpose:
//   1. kernel_family_table(): every family, in the order the selector tries them. A row is
//      a family's four entry points (families.hpp) and a comment saying why it exists.
//   2. select_cuda(): checks the device, then applies the selection rules to the table.
//      Rules that depend on the problem (e.g. "m <= 16: prefer the GEMV family") go into
//      apply_selection_rules(), never into the kernels and never into the table.
//
// A family's make() may still refuse by throwing lowbit::Error (e.g. the cuBLASLt heuristic
// finds no algorithm for a combination its documentation allows); the selector records that
// reason like any other and goes on to the next family.
//
// Restricting the choice: GemmOptions::family (the API; the bench's baselines use it) allows
// one family. Without it, the environment variable LOWBIT_CUDA_FAMILIES, a comma-separated
// list of family names, restricts the selector to those families (a debugging knob, e.g.
// LOWBIT_CUDA_FAMILIES=smxx_gemv lowbit bench ... to time one family on every format).
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "api/gemm_impl.hpp"
#include "cuda/baseline/cublas_gemm.hpp"
#include "cuda/families.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/mixed_gemm/sm80_mixed_gemm_family.hpp"
#include "cuda/mixed_gemm/sm90_mixed_gemm_family.hpp"
#include "cuda/gemv/smxx_gemv_family.hpp"
#include "cuda/fp8_gemm/sm89_fp8_gemm_family.hpp"
#include "cuda/fp8_gemm/sm90_fp8_gemm_family.hpp"
#include "cuda/int8_gemm/sm90_int8_gemm_family.hpp"
#include "cuda/int8_gemm/sm80_int8_gemm_family.hpp"

namespace lowbit {
namespace cuda {

// =======================================================================================
// 1. The table
// =======================================================================================
const std::vector<FamilyEntry>& kernel_family_table() {
  static const std::vector<FamilyEntry> kTable = {
      // The same integer weights (tiled layout) on Hopper with wgmma and register-decoded
      // weights, for the m where it beats mma.sync (rule below; docs/kernels/mixed_gemm.md,
      // "sm90_mixed_gemm"), act-order included (its activations gathered as for sm80_mixed_gemm).
      {kSm90MixedGemmName, kSm90MixedGemmDescription, &sm90_mixed_gemm_runs_on, &sm90_mixed_gemm_can_implement,
       &sm90_mixed_gemm_make},
      // Integer weights (4/8-bit, symmetric or integer zeros) with f16/bf16 activations on
      // tensor cores, every m: ahead of cuBLAS, which takes no integer weights anyway.
      {kSm80MixedGemmName, kSm80MixedGemmDescription, &sm80_mixed_gemm_runs_on,
       &sm80_mixed_gemm_can_implement, &sm80_mixed_gemm_make},
      // Decode GEMV (m <= 8; first for integer weights there, rule below): 1..6 and 8-bit
      // weights in its own layout or the tiled one, any zero point, f16/bf16 or int8
      // activations (docs/kernels/gemv.md).
      {kSmxxGemvName, kSmxxGemvDescription, &smxx_gemv_runs_on, &smxx_gemv_can_implement,
       &smxx_gemv_make},
      // e4m3 GEMM on Hopper for m > 8 (rule below), tensor/row and DeepSeek-V3 block
      // scaling: TMA + wgmma (docs/kernels/fp8_gemm.md, "sm90_fp8_gemm").
      {kSm90Fp8GemmName, kSm90Fp8GemmDescription, &sm90_fp8_gemm_runs_on, &sm90_fp8_gemm_can_implement,
       &sm90_fp8_gemm_make},
      // int8 W8A8 (SmoothQuant) on Hopper: sm90_fp8_gemm's kernel with s8 wgmma and exact int32
      // sums, per-token x per-channel scales and token zero points in the epilogue
      // (docs/kernels/int8_gemm.md). cuBLAS is not a fallback for int8 (cublas_baseline takes
      // no int8 weights).
      {kSm90Int8GemmName, kSm90Int8GemmDescription, &sm90_int8_gemm_runs_on, &sm90_int8_gemm_can_implement,
       &sm90_int8_gemm_make},
      // e4m3 x e4m3 with tensor/row or 1x128 x 128x128 scales on mma.sync (sm_89+): the fp8
      // kernel of Ada, and on Hopper the small-m (weight-streaming) one (m <= 8, rule
      // below); every m, n and k multiples of 16 (docs/kernels/fp8_gemm.md, "sm89_fp8_gemm").
      {kSm89Fp8GemmName, kSm89Fp8GemmDescription, &sm89_fp8_gemm_runs_on, &sm89_fp8_gemm_can_implement,
       &sm89_fp8_gemm_make},
      // int8 W8A8 (SmoothQuant) on mma.sync s8 (sm_80+): sm89_fp8_gemm's kernel over int8,
      // exact int32 sums, per-token x per-channel scales and token zero points in the
      // epilogue; every m, n and k multiples of 16 (docs/kernels/int8_gemm.md,
      // "sm80_int8_gemm"). The int8 kernel of Ampere and Ada, and the fallback on Hopper.
      {kSm80Int8GemmName, kSm80Int8GemmDescription, &sm80_int8_gemm_runs_on, &sm80_int8_gemm_can_implement,
       &sm80_int8_gemm_make},
      // The reference every lowbit kernel is measured against, and the fallback for dense
      // and fp8 problems no specialised family takes. Last in the order once other
      // families exist: it never loses a problem another family can run better.
      {kCublasBaselineName, kCublasBaselineDescription, &cublas_baseline_runs_on,
       &cublas_baseline_can_implement, &cublas_baseline_make},
  };
  return kTable;
}

// =======================================================================================
// 2. Selection rules
// =======================================================================================
namespace {

// The smallest m that sm90_mixed_gemm takes ahead of sm80_mixed_gemm (rule below), and the
// largest m up to which 4-bit weights stay on sm80_mixed_gemm's 32-token tile instead.
constexpr int64_t kSm90MixedMinM = 17;
constexpr int64_t kSm80Mixed4BitMaxM = 32;
// The largest m that smxx_gemv takes ahead of the mixed GEMMs (rule below).
constexpr int64_t kGemvFirstMaxM = 8;

// sm80_mixed_gemm's plan for desc (what its make() would run), or none where it cannot plan
// one: the rules below that read it then do not apply.
std::optional<MixedGemmPlan> sm80_plan(const GemmDesc& desc, const GpuSpec& gpu) {
  try {
    return sm80_mixed_gemm_plan(desc, gpu);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// sm80_mixed_gemm's plan for desc where it is t32 (m = 17..32): its split count, CTAs and
// stages per split, which the two rules below weigh; none for any other plan.
struct T32Plan {
  int splits;
  int64_t ctas, stages_per_split;
};
std::optional<T32Plan> sm80_t32_plan(const GemmDesc& desc, const GpuSpec& gpu) {
  const std::optional<MixedGemmPlan> plan = sm80_plan(desc, gpu);
  if (!plan || std::string(kMixedGemmConfigs[plan->config].tag) != "t32") return std::nullopt;
  const MixedGemmTileConfig& t = kMixedGemmConfigs[plan->config];
  return T32Plan{plan->splits, mixed_gemm_tiles(plan->config, desc.m, desc.n) * plan->splits,
                 (desc.k + t.block_k - 1) / t.block_k / plan->splits};
}

// 4-bit weights at m = 17..32 where sm80_mixed_gemm's t32 plan leaves about one CTA per SM
// (at most 1.25 x SMs) over long splits (at least 16 stages, 4096 k, each): there the wgmma
// kernel streams faster (a lone mma.sync CTA per SM does not keep enough bytes in flight).
// Session 63 (H200, W4 g128 f16, us, at m = 24 / 32, every t32 plan forced against
// sm90_mixed_gemm pinned, same run): Suite 1's down 4096 x 14336 (t32 s2, 128 CTAs, 7168 k
// each) 24.75 / 25.07 against sm90 21.49 / 21.74, 5120 x 13824 (s2, 160 CTAs) 28.96 / 29.42
// against 26.04 / 26.46, 10240 x 8192 (s1, 160 CTAs) 32.78 / 33.38 against 31.92 / 32.47;
// t32 stays where its splits are shorter (4096 x 4096 s2 9.85 against 10.68, 5120 x 5120 s2
// 12.35 against 14.33, 4608 x 3584 s2 9.49 against 12.06) or its CTAs share SMs (8192 x 28672
// s2, 256 CTAs, 57.98 against 71.70; 3584 x 18944 s4 22.50 against 26.18).
bool sm90_first_lone_t32(const GemmDesc& desc, const GpuSpec& gpu) {
  if (gpu.cc < 90 || desc.m < kSm90MixedMinM || desc.m > kSm80Mixed4BitMaxM) return false;
  const std::optional<T32Plan> t32 = sm80_t32_plan(desc, gpu);
  return t32 && 4 * t32->ctas <= 5 * static_cast<int64_t>(gpu.sm_count) && t32->stages_per_split >= 16;
}

// 8-bit weights at m = 17..32 where sm80_mixed_gemm's t32 plan splits k in two or more over
// short splits (at most 8 stages, 2048 k, each) with every CTA on its own SM (8-bit t32 runs
// one CTA per SM): the mma.sync kernel first; elsewhere sm90_mixed_gemm streams faster.
// Session 63 (H200, W8 per-channel f16, every t32 plan forced with sm80_mixed_gemm pinned
// against the default sm90_mixed_gemm, same run, us, m = 24 / 32): 3072 x 3072 (t32 s2, 96
// CTAs, 6 stages per split) 8.91 / 9.01 against 9.76 / 10.01, 3584 x 3584 (s2, 112, 7) 9.77 /
// 9.93 against 10.85 / 11.02, Suite 1's o 4096 x 4096 (s2, 128, 8) 10.71 / 10.82 against 11.34
// / 11.73; longer splits lose (3072 x 8192 s2, 16 stages, 15.96 / 16.08 against 14.50 / 14.67;
// Suite 1's down s2 25.04 / 25.06 against 22.24 / 23.07), and so do unsplit plans (4608 x 3584
// s1 13.68 / 13.80 against 12.73 / 12.92, 6144 x 4096 s1 15.41 / 15.56 against 14.86 / 15.09).
// Session 64 (H200, default against sm90 pinned, two rounds, m = 17 / 24 / 32, per-channel f16 /
// bf16 and g128 f16 on the three layers above): all 27 points -2.9..-10.0%. Symmetric weights
// only: zero points were not measured.
bool sm80_first_short_w8_t32(const GemmDesc& desc, const GpuSpec& gpu) {
  if (gpu.cc < 90 || desc.w.kind != WeightKind::kInt || desc.w.int_format.bits != 8 ||
      desc.w.int_format.zero != ZeroPoint::kSymmetric || desc.m < kSm90MixedMinM || desc.m > kSm80Mixed4BitMaxM)
    return false;
  const std::optional<T32Plan> t32 = sm80_t32_plan(desc, gpu);
  return t32 && t32->splits >= 2 && t32->ctas <= static_cast<int64_t>(gpu.sm_count) && t32->stages_per_split <= 8;
}

// 8-bit symmetric weights (per-channel or groups of 128) at m = 5..8 where the GEMV's launch
// splits k over a cluster of blocks (its activations do not fit one block's shared memory
// beside the ring), on layers of at least 7168 channels (4096 at m = 8): sm80_mixed_gemm first.
// Session 63 (H200, W8 per-channel f16, m = 8, each family pinned, us): 8192 x 28672 (GEMV k4)
// 75.19 against 56.75, 8192 x 8192 (k2) 23.32 against 18.78, 27648 x 5120 46.64 against 38.50,
// 57344 x 8192 143.96 against 124.63, 7168 x 5120 13.43 against 12.14, 10240 x 8192 28.61 against
// 26.43, 5120 x 13824 24.78 against 23.20, Suite 1's down 4096 x 14336 20.60 against 19.77; the
// narrower layers stay on the GEMV (3072 x 8192 k2 10.79 against 12.95, 3584 x 18944 k4 23.76
// against 24.30). Session 64 (two H200 calls, per-channel f16 / bf16 and g128 f16 at m = 5..8,
// `bench/results/2026-11-29-h200-session64-w8-rules/`): at m = 8 sm80 is faster on every such
// layer (g128 too: 5120 x 5120 10.26 against 10.65) but per-channel 5120 x 5120 (f16 10.60 / 10.54,
// bf16 11.36 / 11.13); at m = 5..7 on the layers of 7168 channels or more, -2.6..-24% (8192 x 28672
// f16 m = 6 56.14 against 73.65, 7168 x 5120 12.05 against 13.26, 57344 x 8192 m = 7 124.87
// against 144.47), except 10240 x 8192 at m = 5 / 6 (+1.5..4.8%: f16 m = 6 26.54 against 25.82,
// g128 m = 5 26.21 against 25.18; at m = 7 -5..-7%; excluded below); narrower layers lose at
// m = 5..7 (4096 x 14336 f16 19.78 against 19.48 at m = 6, bf16 21.74 against 20.69 at m = 7;
// 5120 x 5120 1-2%).
// At m = 4 only 8192 x 28672 was faster on sm80 (session 63: 55.75 against the GEMV's 68.74;
// 4096 x 14336 19.47 against 17.04). Zero points and groups of 32 / 64 were not measured.
// Where the GEMV does not split k (per-channel weights at m = 5 on layers of k <= 8192; from
// m = 6 it splits every k >= 5120), sm80_mixed_gemm first only where its plan is t16 in two or
// more splits over k >= 5120. Session 65 (H200, both families pinned, two rounds within 0.2 us,
// `bench/results/2026-11-29-h200-session65/`, per-channel f16 / bf16 at m = 5): t16 s2 layers
// with k >= 5120 -4.2..-8.2% (7168 x 5120 11.96 against 12.52 f16, 8192 x 8192 18.61 against
// 19.94, 7168 x 8192 16.97 against 18.20, 8192 x 5120, 7168 x 7168 -2.1..-2.8%; 8192 x 6144 f16
// +1.2%, bf16 -1.6%); with k = 4096 the GEMV stays 12-26% faster (6144 / 7168 / 8192 x 4096),
// and so on t16 s1 layers (9216 x 5120 +14%, 10240 x 8192 +11%, 16384 x 3072 +6%).
bool mixed_first_w8_m5_to_8(const GemmDesc& desc, const GpuSpec& gpu) {
  const IntWeightFormat& f = desc.w.int_format;
  if (desc.w.kind != WeightKind::kInt || f.bits != 8 || f.zero != ZeroPoint::kSymmetric ||
      (f.group_size != 0 && f.group_size != 128) || desc.m < 5 || desc.m > 8 || desc.n < (desc.m == 8 ? 4096 : 7168))
    return false;
  if (!smxx_gemv_can_implement(desc, gpu).ok()) return false;
  const bool ksplit = smxx_gemv_launch_for(desc, gpu).ksplit > 1;
  if (ksplit && desc.m == 8) return true;
  const std::optional<MixedGemmPlan> plan = sm80_plan(desc, gpu);
  if (!plan) return false;
  const bool t16 = std::string(kMixedGemmConfigs[plan->config].tag) == "t16";
  // Below m = 8, not where sm80's plan is t16 in one split (10240 x 8192: 160 CTAs of the whole k,
  // about one per SM), whose time varied from call to call: f16 m = 6 26.54 / 27.93 / 29.53 us in
  // three session-64 calls against the GEMV's 25.65-25.82.
  if (ksplit) return !(t16 && plan->splits == 1);
  return t16 && plan->splits >= 2 && desc.k >= 5120;
}

// Long k over few rows (k >= 2 n, Suite 1's down): smxx_gemv first while its launch holds
// the block's activations once in shared memory (choose_gemv_launch: x_mode kGemvXOnce);
// staged per item instead, the mixed GEMM streams faster (rule below). Widths the mixed GEMMs
// do not take (1, 2, 3, 5, 6 bits) stay on the GEMV.
// Act-order weights (session 67, docs/kernels/gemv.md "Act-order"): the GEMV holds a k-entry table
// of the packed columns' places per block, so long k at larger m needs a cluster of 4 where plain
// weights take 2, and there the mixed GEMM is faster: H200, Suite 1's down (4096 x 14336), W4
// g128 f16 act-order, m = 8: GEMV (k4) 30.69 us against sm80_mixed_gemm 20.65; at m = 4 the GEMV
// (k2) 18.59 against 20.87. Session 68 (the lanes' gather at m <= 2, and the launch's cluster /
// fewer-warps search at m <= 2 too, so act-order layers of very long k are no longer refused
// there): H200, the same binary, two rounds, GEMV / sm80_mixed_gemm pinned, us: W4 g128 f16
// act-order 8192 x 28672 m = 1 (one block) 35.25 / 37.8, m = 2 (k2, 8 warps) 43.37 / 40.2; W8
// g128 f16 act-order 8192 x 28672 m = 1 (k2, 14 warps) 61.0 / 59.8, 4096 x 14336 m = 1 / 2 16.2 /
// 19.7 and 19.0 (k2) / 20.05, 5120 x 13824 m = 1 / 2 19.2 / 27.3 and 23.6 (k2) / 27.5; Suite 1's
// down, clusters of 2: W4 m = 3 / 4 / 5 (14 warps) 14.30 / 18.55 / 20.43 against 18.78 / 20.89 /
// 23.11, but m = 6 (14 warps) 23.84 against 20.36 (sm80 there on 16-token tiles) and m = 7 (8
// warps) 29.76 against 20.58; W8 m = 2 (14 warps) 18.95 against 20.09, m = 3 / 4 / 5 (10 / 10 / 8
// warps) 22.78 / 24.63 / 28.70 against 21.70 / 23.61 / 25.66. So an act-order cluster stays on the
// GEMV only with 12 warps or more, at m <= 5 and n < 7168. Session 70, 4-bit weights at m = 6..8
// on clusters of 2 with 16 warps (layers of <= 3072 channels; the gather in rounds since session
// 69): H200 (bench/results/2026-11-29-h200-session70/ call 2), the same binary, two rounds, GEMV
// pinned / default (sm80_mixed_gemm t16 s4), W4 g128 f16 act-order, us: 2048 x 8192 m = 7 / 8 10.43 /
// 10.87 against 11.97 / 12.08, 3072 x 8192 11.61 / 12.13 against 12.70 / 12.80; with 8 or 10 warps
// the GEMV still loses (1536 x 8960 m = 6 / 8, 8 warps, 14.10 / 16.91 against 10.84 / 11.01; 2048 x
// 5632 m = 8, 10 warps, 12.14 against 11.78), as with 14 on Suite 1's down at m = 6 (20.9 against
// 20.2, session 69). So at m > 5 a 4-bit cluster of 2 with 16 warps stays on the GEMV.
bool gemv_first_long_k(const GemmDesc& desc, const GpuSpec& gpu) {
  const int bits = desc.w.int_format.bits;
  if (bits != 4 && bits != 8) return true;
  if (!smxx_gemv_can_implement(desc, gpu).ok()) return false;
  const gemv::GemvLaunch l = smxx_gemv_launch_for(desc, gpu);
  if (desc.w.int_format.act_order && l.ksplit > 1) {
    const bool full_pair = bits == 4 && l.ksplit == 2 && l.warps >= 16;
    if (l.ksplit >= 4 || l.warps < 12 || (desc.m > 5 && !full_pair) || desc.n >= 7168) return false;
  }
  return l.x_mode == gemv::kGemvXOnce;
}

std::string strip_prefix(const std::string& message) {
  static const std::string kPrefix = "lowbit: ";
  return message.compare(0, kPrefix.size(), kPrefix) == 0 ? message.substr(kPrefix.size())
                                                          : message;
}

// LOWBIT_CUDA_FAMILIES, parsed; empty when unset (every family allowed).
std::vector<std::string> families_from_env() {
  std::vector<std::string> names;
  const char* env = std::getenv("LOWBIT_CUDA_FAMILIES");
  if (env == nullptr) return names;
  std::stringstream list(env);
  std::string item;
  while (std::getline(list, item, ','))
    if (!item.empty()) names.push_back(item);
  return names;
}

// The families to try for `desc` on `gpu`, best first. Today: the table order, restricted to
// GemmOptions::family when one is given, else by LOWBIT_CUDA_FAMILIES. Problem-dependent
// preferences belong here, each with its reason and the measurement behind it.
std::vector<const FamilyEntry*> apply_selection_rules(const GemmDesc& desc, const GpuSpec& gpu,
                                                      const std::string& family,
                                                      std::vector<std::string>* skipped) {
  const std::vector<std::string> only =
      family.empty() ? families_from_env() : std::vector<std::string>{family};
  const char* why = family.empty() ? "excluded by LOWBIT_CUDA_FAMILIES" : "not the family asked for";
  std::vector<const FamilyEntry*> order;
  for (const FamilyEntry& f : kernel_family_table()) {
    bool allowed = only.empty();
    for (const std::string& name : only) allowed = allowed || name == f.name;
    if (allowed)
      order.push_back(&f);
    else if (family.empty())
      skipped->push_back(std::string(f.name) + ": " + why);
  }
  // --- fp8 at m <= 8: sm89_fp8_gemm before sm90_fp8_gemm -------------------------------
  // Up to m = 8 the mma.sync kernel's 8-token tile streams the weights faster than 64-row
  // wgmma tiles; its 16-token tile (m = 9..16) does not. Measured on H200 (lowbit bench, Suite
  // 1 sums, each family pinned with LOWBIT_CUDA_FAMILIES, session 20), per-tensor / block, us:
  // m = 2 / 4 / 8 sm89 65.5 / 72.6 / 72.0 and 68.7 / 73.8 / 73.7 against sm90 80.8 / 80.9 /
  // 80.1 and 91.3 / 91.7 / 87.8. m = 12 / 16: sm89 84.7 / 84.4 and 88.3 / 87.7 against sm90
  // 76.2 / 75.9 and 80.5 / 79.7 with its long-k plan (sm90_fp8_gemm_heuristic.cpp; per layer,
  // sm89's t16 runs o in 12.8 us and down in 28.2, against 9.6 and 21.5 on sm90). m = 9 / 10:
  // sm89 78.5 / 80.3 and 80.8 / 82.3; sm90 at m = 9 80.5 and 90.1 with the model's down plan,
  // about 75.8 and 80.5 with the long-k one (down at m = 9 with m64n128 s4 not measured).
  // Before (commit 5f315fa) sm89 came first up to m = 16 (85.0 against 86.1 at m = 16 then).
  // Except, from m = 3, layers with more channels than sm89's t64 tile covers in one resident
  // wave (t64 rows x its CTAs per SM x SMs: 33792 on a 132-SM GPU), where sm89 would run its
  // 8-token tile in several waves: H200, gate_up, per-tensor / block, us, sm89 t8 against sm90
  // at m = 3..8: 38.3-38.9 against 33.4-34.2 and 38.9-40.5 against 34.4-35.8. Below that bound
  // sm89 takes t64 there (sm89_fp8_gemm_heuristic.cpp, session 58), which beats sm90: gate_up
  // (28672 channels), same call, each family pinned, m = 3 / 4 / 8, sm89 t64 s1 30.39 / 30.47 /
  // 30.87 and 30.43 / 30.52 / 30.95 against sm90 m64n128 s1 31.50 / 31.18 / 31.45 and 32.55 /
  // 32.25 / 32.08 (session 59, bench/results/2026-11-29-h200-sm89-fp8-gate-up/). Before, every
  // layer of at least 128 x SMs channels went to sm90 from m = 3 (the rule of the t8 era).
  const Sm89Fp8TileConfig& t64 = kSm89Fp8Configs[sm89_fp8_config_index("t64")];
  const bool fp8_beyond_one_wave =
      desc.n > static_cast<int64_t>(t64.block_n) * t64.min_ctas * std::max(1, gpu.sm_count);
  if (desc.w.kind == WeightKind::kFp8 && desc.m <= 8 && !(desc.m >= 3 && fp8_beyond_one_wave)) {
    auto at = [&](const char* name) {
      return std::find_if(order.begin(), order.end(), [&](const FamilyEntry* f) { return std::string(f->name) == name; });
    };
    auto sm89 = at(kSm89Fp8GemmName), sm90 = at(kSm90Fp8GemmName);
    if (sm89 != order.end() && sm90 != order.end() && sm90 < sm89) std::rotate(sm90, sm89, sm89 + 1);
  }
  // --- int8 (W8A8) at m <= 8: sm80_int8_gemm before sm90_int8_gemm ---------------------
  // The same two kernels as fp8 above over int8 operands (same tiles, bytes and tensor-core
  // rates), so the same rule, checked on int8 (H100, session 36, docs/kernels/int8_gemm.md,
  // "Selection"). And long k over few rows (k >= 2 n, Suite 1's down) up to m = 16, where the
  // mma.sync kernel's 16-token tile in 2-4 splits streams faster than sm90's m64n128 in four:
  // H100, down, us, sm80 / sm90 at m = 9 / 10 / 12 / 14 / 16: 24.60 / 24.94 / 24.08 / 24.35 /
  // 24.20 against 26.77 / 27.06 / 26.81 / 26.94 / 26.90 (qkv, o and gate_up stay on sm90 from
  // m = 9: within 0.5 us, or sm90 ahead, except o at m = 9 / 10, 9.26 / 9.59 against 10.32).
  // (fp8 down measured alike on the H100 in the same run, sm89 24.53-25.42 against sm90
  // 26.65-26.95 us at m = 9..16, but fp8's rule was fitted on the H200 and is left as it is
  // until measured there.)
  // The int8 kernels keep t8 at m <= 8 (their t64 ran gate_up slower), so int8 keeps the t8-era
  // rule: at least one m64n128 tile of sm90 per SM (gate_up) goes to sm90 from m = 3.
  const bool int8_many_channels = desc.n >= 128 * static_cast<int64_t>(std::max(1, gpu.sm_count));
  const bool int8_long_k = desc.m <= 16 && desc.k >= 2 * desc.n;
  if (desc.w.kind == WeightKind::kInt8 && ((desc.m <= 8 && !(desc.m >= 3 && int8_many_channels)) || int8_long_k)) {
    auto at = [&](const char* name) {
      return std::find_if(order.begin(), order.end(), [&](const FamilyEntry* f) { return std::string(f->name) == name; });
    };
    auto sm80 = at(kSm80Int8GemmName), sm90 = at(kSm90Int8GemmName);
    if (sm80 != order.end() && sm90 != order.end() && sm90 < sm80) std::rotate(sm90, sm80, sm80 + 1);
  }
  // --- Integer weights at m <= 8 (decode): smxx_gemv first -------------------------------
  // The GEMV reads the tiled layout in place, so 4/8-bit weights packed once run on it at
  // decode m and on a mixed GEMM above (docs/kernels/gemv.md, "Reading the tiled layout").
  // Measured on H200 (lowbit bench, Suite 1 per layer, each family pinned with
  // LOWBIT_CUDA_FAMILIES), W4 g128 f16 at m = 1: GEMV qkv / o / gate_up / down 8.06 / 6.65 /
  // 22.08 / 16.50 us against sm80_mixed_gemm 7.94 / 6.88 / 25.95 / 13.77; m = 8: 16.89 /
  // 12.59 / 41.41 / 21.92 against 17.96 / 13.98 / 60.67 / 30.61; W8 per-channel m = 1: 8.99 /
  // 7.80 / 30.45 / 20.57 against 13.81 / 8.08 / 39.46 / 17.52. The exception: long k over few
  // rows (down, k >= 2n), where the GEMV cannot keep the activations staged once (k x m x 2
  // bytes beside its ring exceed an SM's shared memory) and the mixed GEMM's split-K then
  // streams faster (gemv_first_long_k). Measured (session 14, H200, down 4096 x 14336, us,
  // default launch and plan; GEMV with 2-slot rings): W4 g128 f16 GEMV (x once) at m = 1..6
  // 12.52 / 12.68 / 12.94 / 13.23 / 14.93 / 17.62 against sm80_mixed_gemm 14.16 / 14.65 /
  // 17.65 / 19.21 / 21.22 / 23.11; m = 7 / 8 sm80_mixed_gemm 22.64 / 22.61 against the GEMV
  // staging per item (4-slot rings: 31.57 / 33.60); W8 per-channel GEMV m = 1..5 17.60 / 17.87 /
  // 19.23 / 22.39 / 22.76 against 18.03 / 18.57 / 19.71 / 21.29 / 23.33, m = 6..8 sm80 27.8-27.9
  // against the GEMV per item 30.5-36.7. Session 17: on sm_90 the GEMV's launch splits k over
  // a cluster of blocks where one block cannot stage the activations, so it stages them once at
  // every m <= 8 and comes first (H200, down, us: W4 g128 f16 m = 5..8 13.94 / 14.28 / 14.66 /
  // 16.19 against the mixed GEMM's 21.22 / 23.11 / 22.60 / 22.63; W8 per-channel m = 6..8
  // 20.02 / 22.98 / 21.14 against 27.8-27.9; docs/kernels/gemv.md v11).
  const bool long_k = desc.k >= 2 * desc.n;
  if (desc.w.kind == WeightKind::kInt && desc.m <= kGemvFirstMaxM && (!long_k || gemv_first_long_k(desc, gpu)) &&
      !mixed_first_w8_m5_to_8(desc, gpu)) {
    auto gemv = std::find_if(order.begin(), order.end(),
                             [&](const FamilyEntry* f) { return std::string(f->name) == kSmxxGemvName; });
    if (gemv != order.end()) std::rotate(order.begin(), gemv, gemv + 1);
  }
  // --- Integer weights at small m: sm80_mixed_gemm before sm90_mixed_gemm ----------------
  // kSm90MixedMinM: below it the mma.sync kernel's 8- and 16-token tiles stream the weights
  // faster than the 128-channel x 64-token wgmma tiles. Measured on H200 (lowbit bench, Suite 1
  // sums, each family pinned with LOWBIT_CUDA_FAMILIES): W4 g128 f16 sm80 83.1 / 152.9 / 162.6
  // us at m = 16 / 32 / 64 against sm90 98.2 / 97.9 / 101.8; W8 per-channel 94.4 / 182.7 / 196.3
  // against 103.2 / 97.7 / 96.7 (docs/kernels/mixed_gemm.md, "sm90_mixed_gemm").
  // 4-bit weights up to m = 32: sm80_mixed_gemm's 32-token tile (t32) first. H200, session 34,
  // same run, us per layer qkv / o / gate_up / down, sm80 (plan sweep, t32) against sm90: W4
  // g128 f16 m = 17 11.4 / 10.4 / 37.9 / 26.0 against 16.8 / 11.7 / 49.5 / 26.1, m = 32 11.9
  // / 10.9 / 39.7 / 27.2 against 16.9 / 11.8 / 50.1 / 26.4; at m = 48 sm90 wins (qkv 18.0 /
  // gate_up 50.1 / down 26.8 against 19.7 / 58.5 / 34.7). 8-bit weights stay on sm90 from
  // m = 17 (W8 per-channel f16 m = 32: gate_up 60.5 / down 29.2 against 44.8 / 24.1).
  // Except where t32 would leave one CTA per SM over long splits (sm90_first_lone_t32).
  // 8-bit weights there go to t32 only over short splits of one wave (sm80_first_short_w8_t32).
  const bool sm80_4bit = desc.w.kind == WeightKind::kInt && desc.w.int_format.bits == 4 &&
                         desc.m <= kSm80Mixed4BitMaxM && !sm90_first_lone_t32(desc, gpu);
  if (desc.w.kind == WeightKind::kInt &&
      (desc.m < kSm90MixedMinM || sm80_4bit || sm80_first_short_w8_t32(desc, gpu))) {
    auto at = [&](const char* name) {
      return std::find_if(order.begin(), order.end(), [&](const FamilyEntry* f) { return std::string(f->name) == name; });
    };
    auto sm80 = at(kSm80MixedGemmName), sm90 = at(kSm90MixedGemmName);
    if (sm80 != order.end() && sm90 != order.end() && sm90 < sm80) std::rotate(sm90, sm80, sm80 + 1);
  }
  if (!family.empty() && order.empty()) {
    std::string known;
    for (const FamilyEntry& f : kernel_family_table()) known += (known.empty() ? "" : ", ") + std::string(f.name);
    skipped->push_back("unknown kernel family '" + family + "' (this build has: " + known + ")");
  }
  return order;
}

}  // namespace
}  // namespace cuda

namespace detail {

Selection select_cuda(const GemmDesc& desc, int device_index, const std::string& family) {
  Selection sel;
  const cuda::GpuSpec* gpu = nullptr;
  try {
    gpu = &cuda::gpu_spec(device_index);  // throws when the device does not exist
  } catch (const Error& e) {
    sel.why_not = Status::Fail(std::string(e.what()) + "; use Device::cpu()");
    return sel;
  }

  std::vector<std::string> reasons;
  for (const cuda::FamilyEntry* f : cuda::apply_selection_rules(desc, *gpu, family, &reasons)) {
    Status s = f->runs_on(*gpu);
    if (s.ok()) s = f->can_implement(desc, *gpu);
    if (s.ok()) {
      try {
        sel.impl = f->make(desc, *gpu);
        if (sel.impl) return sel;
        s = Status::Fail("lowbit: make() returned no implementation");
      } catch (const Error& e) {
        s = Status::Fail(e.what());
      }
    }
    reasons.push_back(std::string(f->name) + ": " + cuda::strip_prefix(s.message()));
  }

  std::string line = "lowbit: no CUDA kernel for " + desc.describe() +
                     " on cuda:" + std::to_string(device_index) + " (" + gpu->name + ", sm_" +
                     std::to_string(gpu->cc) + ")";
  for (size_t i = 0; i < reasons.size(); ++i) line += (i == 0 ? ": " : "; ") + reasons[i];
  sel.why_not = Status::Fail(line);
  return sel;
}

}  // namespace detail
}  // namespace lowbit
