#include "bench/suites.hpp"

namespace lowbit::bench {

const char* suite_name(Suite s) {
  switch (s) {
    case Suite::kSuite1: return "suite1";
    case Suite::kSuite2: return "suite2";
    case Suite::kCpuSmall: return "cpu-small";
  }
  return "?";
}

namespace {

// ANCHORS.md Suite 1: the four linear layers of one Llama-3.1-8B decoder layer, (N, K).
const std::vector<Layer> kLlama8BLayers = {
    {"qkv", 6144, 4096},
    {"o", 4096, 4096},
    {"gate_up", 28672, 4096},
    {"down", 4096, 14336},
};
const std::vector<int64_t> kSuite1M = {1, 16, 64, 256, 1024, 4096};

// ANCHORS.md Suite 2: the (n, k) pairs of the AMD fp8-mm challenge, at m in {1024, 6144}.
const std::vector<std::pair<int64_t, int64_t>> kSuite2NK = {
    {1536, 7168}, {3072, 1536}, {576, 7168},  {7168, 256}, {7168, 2048},
    {4608, 7168}, {7168, 2304}, {512, 7168},  {4096, 512},
};
const std::vector<int64_t> kSuite2M = {1024, 6144};

// The CPU reference backend computes in fp64: Suite 1 / 8 in N and K keeps the small suite
// near 30 s on 2 cores while keeping the layers' proportions.
constexpr int64_t kCpuScale = 8;
const std::vector<int64_t> kCpuM = {1, 16};

}  // namespace

SuiteShapes suite_shapes(Suite s, const std::vector<int64_t>& m_override) {
  SuiteShapes out{s, {}, {}};
  switch (s) {
    case Suite::kSuite1:
      out.layers = kLlama8BLayers;
      out.ms = kSuite1M;
      break;
    case Suite::kSuite2:
      for (const auto& [n, k] : kSuite2NK)
        out.layers.push_back({"n" + std::to_string(n) + "k" + std::to_string(k), n, k});
      out.ms = kSuite2M;
      break;
    case Suite::kCpuSmall:
      for (const Layer& l : kLlama8BLayers)
        out.layers.push_back({l.name, l.n / kCpuScale, l.k / kCpuScale});
      out.ms = kCpuM;
      break;
  }
  if (!m_override.empty()) out.ms = m_override;
  return out;
}

}  // namespace lowbit::bench
