// lowbit: quantized checkpoints on disk (the "lowbit v1" safetensors convention).
//
// `lowbit quantize` writes, for each quantized 2-D tensor NAME (n, k), in place of NAME:
//   integer formats:  NAME.qweight  U8 (n, ceil(k * bits / 8))  codes bit-packed along K,
//                                   LSB first: code j of a row occupies bits [j*b, j*b + b)
//                                   of that row's little-endian bit stream
//                     NAME.scales   F16/BF16/F32 (n, groups)
//                     NAME.qzeros   U8 (n, groups) integer zeros, or scale dtype for float zeros
//                     NAME.g_idx    I32 (k) (act-order only)
//   fp8 formats:      NAME          F8_E4M3/F8_E5M2 (n, k)
//                     NAME_scale    F32 with the shape of the scale grid (per-tensor: [] ...)
//   int8 weights:     NAME          I8 (n, k), NAME_scale F32 (n)
// and records each in __metadata__ as "lowbit.tensor.NAME" -> format name
// ("w4g128", "fp8-128x128", "int8"), plus "lowbit.format_version" -> "1".
// n and k come from the shapes (k = groups * group_size, or the size of g_idx), except for
// per-channel integer formats with k * bits % 8 != 0, where NAME.qweight's row length does not
// determine k: those also record "lowbit.k.NAME" -> k in decimal.
// Tensors that were not quantized are copied unchanged. Kernel layouts are NOT stored:
// a file is architecture-independent, and packers produce kernel layouts at load time.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "lowbit/formats.hpp"
#include "lowbit/safetensors.hpp"

namespace lowbit {

inline constexpr const char* kCheckpointVersionKey = "lowbit.format_version";
inline constexpr const char* kCheckpointTensorPrefix = "lowbit.tensor.";

// Bit-packing of codes along K (the on-disk form above) and its inverse.
std::vector<uint8_t> pack_codes_bitstream(const std::vector<uint8_t>& codes, int64_t n, int64_t k,
                                          int bits);
std::vector<uint8_t> unpack_codes_bitstream(const uint8_t* packed, int64_t n, int64_t k, int bits);

void add_int_weight(SafetensorsWriter& out, const std::string& name, const IntWeight& w);
void add_fp8_tensor(SafetensorsWriter& out, const std::string& name, const Fp8Tensor& t);
void add_int8_tensor(SafetensorsWriter& out, const std::string& name, const Int8Tensor& t);

using QuantizedTensor = std::variant<IntWeight, Fp8Tensor, Int8Tensor>;

// The quantized tensors a lowbit file declares: NAME -> format name. Empty for other files.
std::map<std::string, std::string> list_quantized(const SafetensorsReader& file);
// Loads and validates NAME; throws lowbit::Error naming the tensor if anything is off.
QuantizedTensor load_quantized(const SafetensorsReader& file, const std::string& name);

}  // namespace lowbit
