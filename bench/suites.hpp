// lowbit bench: the problem shapes of each suite.
//
// Suite 1 and Suite 2 are defined in ANCHORS.md (the peers were measured on them); the CPU
// small suite is Suite 1 scaled down for machines without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::bench {

enum class Suite : uint8_t {
  kSuite1,    // Llama-3.1-8B linear layers, f16 activations (ANCHORS.md Suite 1)
  kSuite2,    // fp8 e4m3 1x128 x 128x128 block scaling, bf16 out (ANCHORS.md Suite 2)
  kCpuSmall,  // Suite 1's layers / 8 in N and K, M = 1 and 16, on the CPU backend
};
const char* suite_name(Suite s);  // "suite1", "suite2", "cpu-small"

// One weight shape: out_features n, in_features k.
struct Layer {
  std::string name;  // "qkv", "gate_up", or "n1536k7168" for Suite 2
  int64_t n = 0;
  int64_t k = 0;
};

struct SuiteShapes {
  Suite suite;
  std::vector<Layer> layers;
  std::vector<int64_t> ms;  // every layer is timed at every m
};

// The shapes of a suite; `m_override` (when not empty) replaces its M list, `layer_override`
// (when not empty) its layers.
SuiteShapes suite_shapes(Suite s, const std::vector<int64_t>& m_override,
                         const std::vector<Layer>& layer_override = {});

// Parses `lowbit bench --shapes` entries, "NxK" each (N = out_features, K = in_features,
// positive integers below 2^31), into layers named "n<N>k<K>". Throws lowbit::Error naming the
// entry that is not of that form.
std::vector<Layer> parse_shapes(const std::vector<std::string>& specs);

}  // namespace lowbit::bench
