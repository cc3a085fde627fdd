// lowbit: fp8 checkpoints written by other tools -> the canonical Fp8Tensor, plus the static
// activation scale some of them carry.
//
// Every convention stores the weight NAME (n = out_features, k = in_features) as F8_E4M3
// codes, row-major, and tells its scale apart by the companion tensors next to it. In the
// published checkpoints NAME is "P.weight" for a module prefix P, so NAME_scale is
// "P.weight_scale" and the activation scale is "P.input_scale". Conventions (one fixture
// each in tests/data/fp8/, written by the `safetensors` library; docs/formats.md section 9):
//
//   per-tensor   Llama-3.1-8B-Instruct-FP8 (seed 001), compressed-tensors strategy "tensor":
//                NAME_scale of shape [] or [1].
//                W[r][c] = e4m3(code[r][c]) * weight_scale              -> Fp8Scaling::kPerTensor
//   per-channel  compressed-tensors strategy "channel" (vLLM loads it as a
//                ChannelQuantScaleParameter): NAME_scale of shape (n, 1) or (n).
//                W[r][c] = e4m3(code[r][c]) * weight_scale[r]           -> Fp8Scaling::kPerRow
//   block        DeepSeek-V3 / R1: NAME_scale_inv of shape (ceil(n/128), ceil(k/128)); n and k
//                need not be multiples of 128 (the last block of each axis is partial).
//                W[r][c] = e4m3(code[r][c]) * weight_scale_inv[r/128][c/128]
//                (a MULTIPLIER despite its name: see import_fp8.cpp) -> Fp8Scaling::kBlock128x128
//   optional in all three: P.input_scale of shape [] or [1], the static per-tensor scale of
//                the activations (A = e4m3(code_a) * input_scale), returned as input_scale.
//
// Scales may be F32, BF16 or F16 (each converts to fp32 exactly) and must be finite and > 0;
// the codes must not contain the e4m3 NaN code (S.1111.111). Refused, with a one-line
// lowbit::Error naming the file, the weight and the problem: a weight that is not F8_E4M3
// (F8_E5M2, BF16, ...) or not 2-D or empty, a weight with no scale companion, one with both
// NAME_scale and NAME_scale_inv, a scale or input scale of another dtype or of a shape no
// convention has (including a block grid that does not match n and k), a non-finite or
// non-positive scale, and a NaN code. Nothing is read outside a tensor's validated bytes.
// Block grids stored as NAME_scale (compressed-tensors strategy "block") are refused: their
// block size lives in config.json, not in the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lowbit/formats.hpp"
#include "lowbit/safetensors.hpp"

namespace lowbit {

enum class Fp8Convention : uint8_t {
  kPerTensor,   // NAME_scale [] or [1]
  kPerChannel,  // NAME_scale (n, 1) or (n)
  kBlock128,    // NAME_scale_inv (ceil(n/128), ceil(k/128)) (DeepSeek-V3)
};
// "per-tensor", "per-channel", "deepseek-128x128": the names `lowbit inspect` prints.
const char* fp8_convention_name(Fp8Convention c);
// The canonical scaling a convention imports to (kPerTensor, kPerRow, kBlock128x128).
Fp8Scaling fp8_convention_scaling(Fp8Convention c);

// Where one fp8 weight's parts are in a file: found from the header alone.
struct Fp8Source {
  std::string weight;       // NAME: F8_E4M3 (n, k)
  std::string scale;        // NAME_scale or NAME_scale_inv
  std::string input_scale;  // P.input_scale, or "" when the file has none
  Fp8Convention convention = Fp8Convention::kPerTensor;
  int64_t n = 0;
  int64_t k = 0;
};

struct Fp8Import {
  Fp8Source source;
  Fp8Tensor weight;                // format e4m3 with the convention's scaling; validate() ok
  std::optional<float> input_scale;
};

// The tensors of `file` that claim to be fp8 checkpoint weights, in file order: every tensor
// of dtype F8_E4M3 or F8_E5M2, and every tensor with a NAME_scale_inv companion whatever its
// dtype (so that a DeepSeek-style weight of the wrong dtype is reported, not passed over).
// A tensor that is itself the scale companion of another candidate is not listed. Nothing
// is validated here: import_fp8() / detect_fp8() of a listed name may still throw.
std::vector<std::string> fp8_weight_names(const SafetensorsReader& file);

// The companion names a weight would have, whether or not they are present or valid:
// {NAME_scale, NAME_scale_inv, P.input_scale}, the last only when NAME ends in "weight".
// Used to keep companions together with their weight (lowbit quantize never quantizes them).
std::vector<std::string> fp8_companion_names(const std::string& weight_name);

// Detects the convention of `weight_name` and checks every dtype and shape, reading no tensor
// data. Throws lowbit::Error on any of the refusals above except the value checks.
Fp8Source detect_fp8(const SafetensorsReader& file, const std::string& weight_name);

// detect_fp8(), then reads the codes and scales and checks their values. The codes are copied
// bit for bit and the scales converted exactly, so weight.dequant(r, c) is the checkpoint's W.
Fp8Import import_fp8(const SafetensorsReader& file, const std::string& weight_name);

// `t` with the same codes on the scale grid of `target`, when that is exact: every cell of
// the target grid must cover elements that all have one and the same scale in `t` (a
// per-tensor scale repeated per row or per 128x128 block, per-row scales that agree within
// each 128-row block, ...). nullopt when some target cell would need two different scales.
// The dequantized values of the result are bit-identical to those of `t`.
std::optional<Fp8Tensor> fp8_rescale_exact(const Fp8Tensor& t, Fp8Scaling target);

}  // namespace lowbit
