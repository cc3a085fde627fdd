#include "bench/suites.hpp"

#include <cerrno>
#include <cstdlib>

#include "lowbit/status.hpp"

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

std::vector<Layer> parse_shapes(const std::vector<std::string>& specs) {
  std::vector<Layer> out;
  for (const std::string& spec : specs) {
    auto bad = [&](const std::string& why) {
      return Error("lowbit: --shapes: '" + spec + "' " + why +
                   " (expected NxK: out_features x in_features, e.g. 7168x16384)");
    };
    const size_t x = spec.find_first_of("xX");
    if (x == std::string::npos) throw bad("has no 'x'");
    auto number = [&](const std::string& text, const char* what) {
      if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        throw bad(std::string("has a ") + what + " that is not a positive integer");
      errno = 0;
      const long long v = std::strtoll(text.c_str(), nullptr, 10);
      if (errno != 0 || v < 1 || v >= (int64_t{1} << 31))
        throw bad(std::string("has a ") + what + " outside 1 .. 2^31 - 1");
      return static_cast<int64_t>(v);
    };
    const int64_t n = number(spec.substr(0, x), "N");
    const int64_t k = number(spec.substr(x + 1), "K");
    const std::string name = "n" + std::to_string(n) + "k" + std::to_string(k);
    for (const Layer& l : out)  // the summaries count layers by name
      if (l.name == name) throw bad("repeats an earlier shape");
    out.push_back({name, n, k});
  }
  return out;
}

SuiteShapes suite_shapes(Suite s, const std::vector<int64_t>& m_override,
                         const std::vector<Layer>& layer_override) {
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
  if (!layer_override.empty()) out.layers = layer_override;
  return out;
}

}  // namespace lowbit::bench
