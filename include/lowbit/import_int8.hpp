// lowbit: int8 W8A8 checkpoints in the compressed-tensors format (what llm-compressor writes
// for SmoothQuant / W8A8 recipes and vLLM's CompressedTensorsW8A8Int8 scheme loads) -> the
// canonical Int8Tensor, plus the static activation parameters some of them carry.
//
// The weight NAME (n = out_features, k = in_features) is stored as I8 codes, row-major. In the
// published checkpoints NAME is "P.weight" for a module prefix P, so its companions are
// "P.weight_scale", "P.weight_zero_point", "P.input_scale" and "P.input_zero_point".
// Strategies (one fixture each in tests/data/int8/, written by the `safetensors` library;
// docs/formats.md section 10):
//
//   per-channel  strategy "channel" (vLLM: ChannelQuantScaleParameter): NAME_scale of shape
//                (n, 1) or (n).       W[r][c] = code[r][c] * weight_scale[r]
//   per-tensor   strategy "tensor": NAME_scale of shape [] or [1], repeated for every row of
//                the per-channel Int8Tensor.  W[r][c] = code[r][c] * weight_scale
//   optional in both:
//     NAME_zero_point      I8 or I32, of a shape of the scale's strategy. Accepted only when
//                          every value is 0: the int8 GEMMs take symmetric weights.
//     P.input_scale        [] or [1]: the static per-tensor activation scale, returned as
//                          input_scale. Absent: dynamic per-token activations.
//     P.input_zero_point   I8 or I32, [] or [1], in [-128, 127]: the static activation zero
//                          point (A = (code_a - input_zero_point) * input_scale), returned as
//                          input_zero_point. Only together with P.input_scale.
//
// Scales may be F32, BF16 or F16 (each converts to fp32 exactly) and must be finite and > 0;
// the codes are copied bit for bit, so weight.dequant(r, c) is the checkpoint's W. Refused,
// with a one-line lowbit::Error naming the file, the weight and the problem: a weight that is
// not I8 (U8, I32-packed, BF16, ...) or not 2-D or empty; a weight with no NAME_scale; a scale,
// zero point, input scale or input zero point of another dtype or of a shape no strategy has;
// a non-finite or non-positive scale; a nonzero weight zero point (asymmetric weights); an
// input zero point outside [-128, 127] or without an input scale. A scale of shape (n, G),
// 1 < G <= k, is compressed-tensors strategy "group" and is refused as such: its group size
// lives in config.json, not in the file, and the int8 GEMMs take one scale per channel.
// Nothing is read outside a tensor's validated bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lowbit/formats.hpp"
#include "lowbit/safetensors.hpp"

namespace lowbit {

enum class Int8Convention : uint8_t {
  kPerTensor,   // NAME_scale [] or [1] (strategy "tensor")
  kPerChannel,  // NAME_scale (n, 1) or (n) (strategy "channel")
};
// "per-tensor", "per-channel".
const char* int8_convention_name(Int8Convention c);

// Where one int8 weight's parts are in a file: found from the header alone. Empty names
// are companions the file does not have.
struct Int8Source {
  std::string weight;            // NAME: I8 (n, k)
  std::string scale;             // NAME_scale
  std::string zero_point;        // NAME_zero_point, or ""
  std::string input_scale;       // P.input_scale, or ""
  std::string input_zero_point;  // P.input_zero_point, or ""
  Int8Convention convention = Int8Convention::kPerChannel;
  int64_t n = 0;
  int64_t k = 0;
};

struct Int8Import {
  Int8Source source;
  Int8Tensor weight;                       // per-channel scales (n), no zeros; validate() ok
  std::optional<float> input_scale;        // static activations; nullopt = dynamic per-token
  std::optional<int32_t> input_zero_point; // static asymmetric activations, in [-128, 127]
};

// The tensors of `file` that are int8 checkpoint weights, in file order: every 2-D I8 tensor
// with a NAME_scale companion. A tensor that is itself a companion of another listed weight
// is not listed. Only dtypes, ranks and names are looked at: import_int8() / detect_int8() of
// a listed name may still throw.
std::vector<std::string> int8_weight_names(const SafetensorsReader& file);

// The companion names a weight would have, whether or not they are present or valid:
// {NAME_scale, NAME_zero_point, P.input_scale, P.input_zero_point}, the last two only when
// NAME ends in "weight" (P = NAME without it).
std::vector<std::string> int8_companion_names(const std::string& weight_name);

// Detects the strategy of `weight_name` and checks every dtype and shape, reading no tensor
// data. Throws lowbit::Error on any of the refusals above except the value checks.
Int8Source detect_int8(const SafetensorsReader& file, const std::string& weight_name);

// detect_int8(), then reads the codes, scales and zero points and checks their values.
Int8Import import_int8(const SafetensorsReader& file, const std::string& weight_name);

}  // namespace lowbit
