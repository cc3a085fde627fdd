// lowbit: the "lowbit v1" quantized-checkpoint convention (see checkpoint.hpp).
//
// Writers store the canonical unpacked forms of formats.hpp (codes bit-packed along K,
// scales in their own dtype); load_quantized() rebuilds them, checks every tensor's dtype
// and shape against the format named in __metadata__, and finally runs the struct's own
// validate(), so that a loaded tensor is exactly as trustworthy as a freshly quantized one.
#include "lowbit/checkpoint.hpp"

#include <cstring>
#include <limits>
#include <string_view>

#include "lowbit/numeric.hpp"
#include "lowbit/status.hpp"

namespace lowbit {
namespace {

// g_idx is stored as little-endian I32 and copied with memcpy.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "lowbit's safetensors I/O assumes a little-endian host");

constexpr const char* kCheckpointVersion = "1";
// Per-channel integer formats whose K * bits is not a multiple of 8 record K here, because
// the row length of NAME.qweight, ceil(K * bits / 8) bytes, does not determine K.
constexpr const char* kCheckpointKPrefix = "lowbit.k.";

std::string printable(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (out.size() >= 160) return out + "...";
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Removes the "lowbit: " that every Status message starts with, to re-prefix it.
std::string strip_prefix(const std::string& message) {
  constexpr std::string_view kPrefix = "lowbit: ";
  return message.compare(0, kPrefix.size(), kPrefix) == 0 ? message.substr(kPrefix.size())
                                                          : message;
}

bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  if (a < 0 || b < 0) return false;
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) return false;
  *out = a * b;
  return true;
}

// Bytes of one packed row: ceil(k * bits / 8).
int64_t packed_row_bytes(int64_t k, int bits) {
  int64_t total_bits = 0;
  if (!checked_mul(k, bits, &total_bits) || total_bits > std::numeric_limits<int64_t>::max() - 7)
    throw Error("lowbit: bit-packing: K=" + std::to_string(k) + " x bits=" +
                std::to_string(bits) + " overflows int64");
  return (total_bits + 7) / 8;
}

void check_pack_args(const char* what, int64_t n, int64_t k, int bits) {
  if (bits < 1 || bits > 8)
    throw Error(std::string("lowbit: ") + what + ": bits out of range (expected 1..8 vs actual " +
                std::to_string(bits) + ")");
  if (n < 0 || k < 0)
    throw Error(std::string("lowbit: ") + what + ": negative shape (n=" + std::to_string(n) +
                ", k=" + std::to_string(k) + ")");
}

void throw_for_tensor(const std::string& name, const Status& s) {
  if (!s.ok()) throw Error("lowbit: checkpoint tensor '" + printable(name) + "': " +
                           strip_prefix(s.message()));
}

void mark_quantized(SafetensorsWriter& out, const std::string& name, const std::string& format) {
  out.set_metadata(kCheckpointVersionKey, kCheckpointVersion);
  out.set_metadata(kCheckpointTensorPrefix + name, format);
}

// Floats -> a buffer of `dtype` (f16/bf16/f32), rounding as numeric.hpp specifies.
std::vector<uint8_t> encode_floats(const std::vector<float>& values, DType dtype) {
  std::vector<uint8_t> bytes(values.size() * dtype_size(dtype));
  for (std::size_t i = 0; i < values.size(); ++i)
    store_from_f32(bytes.data(), dtype, static_cast<int64_t>(i), values[i]);
  return bytes;
}

// ---------------------------------------------------------------------------------------
// Loading: every check names the file, the quantized tensor and the stored tensor.
// ---------------------------------------------------------------------------------------
class Loader {
 public:
  Loader(const SafetensorsReader& file, const std::string& name, const std::string& format)
      : file_(file), name_(name), format_(format) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw Error("lowbit: " + printable(file_.path()) + ": tensor '" + printable(name_) +
                "': " + problem + " [format " + printable(format_) + "]");
  }

  const TensorInfo& need(const std::string& stored) const {
    const TensorInfo* t = file_.find(stored);
    if (!t) fail("missing tensor '" + printable(stored) + "'");
    return *t;
  }
  void forbid(const std::string& stored, const char* why) const {
    if (file_.find(stored)) fail("unexpected tensor '" + printable(stored) + "' (" + why + ")");
  }
  void expect_dtype(const TensorInfo& t, DType want) const {
    if (t.dtype != want)
      fail("'" + printable(t.name) + "' has the wrong dtype (expected " +
           dtype_safetensors_name(want) + " vs actual " + dtype_safetensors_name(t.dtype) + ")");
  }
  void expect_rank(const TensorInfo& t, std::size_t rank) const {
    if (t.shape.size() != rank)
      fail("'" + printable(t.name) + "' has the wrong rank (expected " + std::to_string(rank) +
           " vs actual " + std::to_string(t.shape.size()) + ", shape " + shape_text(t.shape) +
           ")");
  }
  void expect_shape(const TensorInfo& t, const std::vector<int64_t>& want) const {
    if (t.shape != want)
      fail("'" + printable(t.name) + "' has the wrong shape (expected " + shape_text(want) +
           " vs actual " + shape_text(t.shape) + ")");
  }
  std::vector<uint8_t> bytes(const TensorInfo& t) const {
    const uint8_t* p = file_.data(t);
    return std::vector<uint8_t>(p, p + t.nbytes());
  }
  template <typename T>
  void finish(const T& value) const {
    const Status s = value.validate();
    if (!s.ok()) fail(strip_prefix(s.message()));
  }

  IntWeight load_int(const IntWeightFormat& parsed);
  Fp8Tensor load_fp8(const Fp8Format& parsed);
  Int8Tensor load_int8();

 private:
  int64_t recorded_k() const;  // -1 when the file does not record K

  const SafetensorsReader& file_;
  const std::string& name_;
  const std::string& format_;
};

int64_t Loader::recorded_k() const {
  const auto& meta = file_.metadata();
  const auto it = meta.find(kCheckpointKPrefix + name_);
  if (it == meta.end()) return -1;
  const std::string& text = it->second;
  int64_t k = 0;
  bool ok = !text.empty() && text.size() <= 18;  // 18 digits cannot overflow int64
  for (char c : text) {
    if (c < '0' || c > '9') ok = false;
    if (ok) k = k * 10 + (c - '0');
  }
  if (!ok)
    fail("metadata '" + std::string(kCheckpointKPrefix) + printable(name_) +
         "' is not a decimal K (got '" + printable(text) + "')");
  return k;
}

IntWeight Loader::load_int(const IntWeightFormat& parsed) {
  IntWeight w;
  w.format = parsed;
  const TensorInfo& qweight = need(name_ + ".qweight");
  expect_dtype(qweight, DType::kU8);
  expect_rank(qweight, 2);
  const TensorInfo& scales = need(name_ + ".scales");
  if (scales.dtype != DType::kF16 && scales.dtype != DType::kBF16 && scales.dtype != DType::kF32)
    fail("'" + printable(scales.name) + "' has the wrong dtype (expected F16, BF16 or F32 vs "
         "actual " + dtype_safetensors_name(scales.dtype) + ")");
  expect_rank(scales, 2);
  w.format.scale_dtype = scales.dtype;
  if (const Status s = w.format.validate(); !s.ok()) fail(strip_prefix(s.message()));
  w.n = qweight.shape[0];
  const int bits = w.format.bits;  // 1..8: checked by validate() above
  const int64_t row_bytes = qweight.shape[1];
  const int64_t stored_groups = scales.shape[1];

  // K: from g_idx (act-order), from the group count, or from the packed row length.
  const int64_t k_recorded = recorded_k();
  int64_t k = -1;
  if (parsed.act_order) {
    const TensorInfo& g_idx = need(name_ + ".g_idx");
    expect_dtype(g_idx, DType::kI32);
    expect_rank(g_idx, 1);
    k = g_idx.shape[0];
  } else if (parsed.group_size > 0) {
    if (!checked_mul(stored_groups, parsed.group_size, &k))
      fail("'" + printable(scales.name) + "' group count overflows K");
  } else if (k_recorded >= 0) {
    k = k_recorded;
  } else {
    if (row_bytes > std::numeric_limits<int64_t>::max() / 8 || (row_bytes * 8) % bits != 0)
      fail("K cannot be derived from '" + printable(qweight.name) + "' with " +
           std::to_string(row_bytes) + " bytes per row and no metadata '" + kCheckpointKPrefix +
           printable(name_) + "'");
    k = row_bytes * 8 / bits;
  }
  if (k_recorded >= 0 && k_recorded != k)
    fail("metadata K disagrees with the tensor shapes (expected " + std::to_string(k) +
         " vs actual " + std::to_string(k_recorded) + ")");
  w.k = k;
  if (!parsed.act_order) forbid(name_ + ".g_idx", "the format has no act-order");

  const int64_t want_row_bytes = packed_row_bytes(k, bits);
  expect_shape(qweight, {w.n, want_row_bytes});
  const int64_t groups = parsed.group_size > 0 ? k / parsed.group_size : 1;
  if (parsed.group_size > 0 && k % parsed.group_size != 0)
    fail("K=" + std::to_string(k) + " is not a multiple of group_size=" +
         std::to_string(parsed.group_size));
  expect_shape(scales, {w.n, groups});

  switch (parsed.zero) {
    case ZeroPoint::kSymmetric:
      forbid(name_ + ".qzeros", "the format is symmetric");
      break;
    case ZeroPoint::kInteger: {
      const TensorInfo& qzeros = need(name_ + ".qzeros");
      expect_dtype(qzeros, DType::kU8);
      expect_shape(qzeros, {w.n, groups});
      w.zeros = bytes(qzeros);
      break;
    }
    case ZeroPoint::kFloat: {
      const TensorInfo& qzeros = need(name_ + ".qzeros");
      expect_dtype(qzeros, scales.dtype);
      expect_shape(qzeros, {w.n, groups});
      w.zeros_f = file_.read_f32(qzeros);
      break;
    }
  }
  if (parsed.act_order) {
    const TensorInfo& g_idx = need(name_ + ".g_idx");
    w.g_idx.resize(static_cast<std::size_t>(k));
    if (k > 0) std::memcpy(w.g_idx.data(), file_.data(g_idx), g_idx.nbytes());
  }

  // Codes: the bits after the last code of a row must be zero, which also catches a file
  // whose K is not the one its writer meant.
  const uint8_t* packed = file_.data(qweight);
  const int tail_bits = static_cast<int>((k * bits) % 8);
  if (tail_bits != 0) {
    const auto unused = static_cast<uint8_t>(0xFFu << tail_bits);
    for (int64_t r = 0; r < w.n; ++r)
      if (packed[r * row_bytes + row_bytes - 1] & unused)
        fail("'" + printable(qweight.name) + "' row " + std::to_string(r) +
             " has nonzero padding bits after code K-1 (K=" + std::to_string(k) + ")");
  }
  w.codes = unpack_codes_bitstream(packed, w.n, k, bits);
  w.scales = file_.read_f32(scales);
  finish(w);
  return w;
}

Fp8Tensor Loader::load_fp8(const Fp8Format& parsed) {
  Fp8Tensor t;
  t.format = parsed;
  const TensorInfo& codes = need(name_);
  expect_dtype(codes, parsed.dtype);
  expect_rank(codes, 2);
  t.rows = codes.shape[0];
  t.cols = codes.shape[1];
  const TensorInfo& scales = need(name_ + "_scale");
  expect_dtype(scales, DType::kF32);
  if (parsed.scaling == Fp8Scaling::kPerTensor)
    expect_shape(scales, {});  // a scalar, as in the Llama-3 FP8 checkpoints
  else
    expect_shape(scales, {t.scale_rows(), t.scale_cols()});
  t.codes = bytes(codes);
  t.scales = file_.read_f32(scales);
  finish(t);
  return t;
}

Int8Tensor Loader::load_int8() {
  Int8Tensor t;
  const TensorInfo& codes = need(name_);
  expect_dtype(codes, DType::kI8);
  expect_rank(codes, 2);
  t.rows = codes.shape[0];
  t.cols = codes.shape[1];
  const TensorInfo& scales = need(name_ + "_scale");
  expect_dtype(scales, DType::kF32);
  expect_shape(scales, {t.rows});
  t.codes.resize(codes.nbytes());
  if (!t.codes.empty()) std::memcpy(t.codes.data(), file_.data(codes), codes.nbytes());
  t.scales = file_.read_f32(scales);
  finish(t);
  return t;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Bit-packing: code j of a row occupies bits [j*b, j*b + b) of the row's little-endian bit
// stream, so a code starting at bit offset `shift` of byte `byte` spills into byte + 1 when
// shift + b > 8 (b <= 8 means it never reaches byte + 2).
// ---------------------------------------------------------------------------------------
std::vector<uint8_t> pack_codes_bitstream(const std::vector<uint8_t>& codes, int64_t n, int64_t k,
                                          int bits) {
  check_pack_args("pack_codes_bitstream", n, k, bits);
  int64_t count = 0;
  if (!checked_mul(n, k, &count) || static_cast<uint64_t>(count) != codes.size())
    throw Error("lowbit: pack_codes_bitstream: codes size (expected n*k = " + std::to_string(n) +
                "*" + std::to_string(k) + " vs actual " + std::to_string(codes.size()) + ")");
  const int64_t row_bytes = packed_row_bytes(k, bits);
  const unsigned max_code = (1u << bits) - 1;
  std::vector<uint8_t> packed(static_cast<std::size_t>(n * row_bytes), 0);
  for (int64_t r = 0; r < n; ++r) {
    const uint8_t* row_codes = codes.data() + r * k;
    uint8_t* row = packed.data() + r * row_bytes;
    for (int64_t j = 0; j < k; ++j) {
      const unsigned code = row_codes[j];
      if (code > max_code)
        throw Error("lowbit: pack_codes_bitstream: code at row " + std::to_string(r) +
                    ", column " + std::to_string(j) + " out of range (expected <= " +
                    std::to_string(max_code) + " vs actual " + std::to_string(code) + ")");
      const int64_t bit = j * bits;
      const int64_t byte = bit >> 3;
      const unsigned shifted = code << (bit & 7);  // at most 15 bits wide
      row[byte] |= static_cast<uint8_t>(shifted);
      if ((bit & 7) + bits > 8) row[byte + 1] |= static_cast<uint8_t>(shifted >> 8);
    }
  }
  return packed;
}

std::vector<uint8_t> unpack_codes_bitstream(const uint8_t* packed, int64_t n, int64_t k,
                                            int bits) {
  check_pack_args("unpack_codes_bitstream", n, k, bits);
  int64_t count = 0;
  if (!checked_mul(n, k, &count))
    throw Error("lowbit: unpack_codes_bitstream: n*k overflows (n=" + std::to_string(n) +
                ", k=" + std::to_string(k) + ")");
  const int64_t row_bytes = packed_row_bytes(k, bits);
  const unsigned mask = (1u << bits) - 1;
  std::vector<uint8_t> codes(static_cast<std::size_t>(count));
  for (int64_t r = 0; r < n; ++r) {
    const uint8_t* row = packed + r * row_bytes;
    uint8_t* out = codes.data() + r * k;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t bit = j * bits;
      const int64_t byte = bit >> 3;
      unsigned word = row[byte];
      if ((bit & 7) + bits > 8) word |= static_cast<unsigned>(row[byte + 1]) << 8;
      out[j] = static_cast<uint8_t>((word >> (bit & 7)) & mask);
    }
  }
  return codes;
}

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------
void add_int_weight(SafetensorsWriter& out, const std::string& name, const IntWeight& w) {
  throw_for_tensor(name, w.validate());
  const int bits = w.format.bits;
  const int64_t groups = w.groups();
  const DType sdt = w.format.scale_dtype;

  const std::vector<uint8_t> qweight = pack_codes_bitstream(w.codes, w.n, w.k, bits);
  out.add(name + ".qweight", DType::kU8, {w.n, packed_row_bytes(w.k, bits)}, qweight.data(),
          qweight.size());
  const std::vector<uint8_t> scales = encode_floats(w.scales, sdt);
  out.add(name + ".scales", sdt, {w.n, groups}, scales.data(), scales.size());
  if (w.format.zero == ZeroPoint::kInteger) {
    out.add(name + ".qzeros", DType::kU8, {w.n, groups}, w.zeros.data(), w.zeros.size());
  } else if (w.format.zero == ZeroPoint::kFloat) {
    const std::vector<uint8_t> zeros = encode_floats(w.zeros_f, sdt);
    out.add(name + ".qzeros", sdt, {w.n, groups}, zeros.data(), zeros.size());
  }
  if (w.format.act_order)
    out.add(name + ".g_idx", DType::kI32, {w.k}, w.g_idx.data(),
            w.g_idx.size() * sizeof(int32_t));
  mark_quantized(out, name, w.format.name());
  if (!w.format.act_order && w.format.group_size == 0 && (w.k * bits) % 8 != 0)
    out.set_metadata(kCheckpointKPrefix + name, std::to_string(w.k));
}

void add_fp8_tensor(SafetensorsWriter& out, const std::string& name, const Fp8Tensor& t) {
  throw_for_tensor(name, t.validate());
  out.add(name, t.format.dtype, {t.rows, t.cols}, t.codes.data(), t.codes.size());
  std::vector<int64_t> scale_shape;  // per-tensor: a scalar
  if (t.format.scaling != Fp8Scaling::kPerTensor) scale_shape = {t.scale_rows(), t.scale_cols()};
  out.add(name + "_scale", DType::kF32, scale_shape, t.scales.data(),
          t.scales.size() * sizeof(float));
  mark_quantized(out, name, t.format.name());
}

void add_int8_tensor(SafetensorsWriter& out, const std::string& name, const Int8Tensor& t) {
  throw_for_tensor(name, t.validate());
  if (t.has_zero_point())
    throw Error("lowbit: checkpoint tensor '" + printable(name) +
                "': int8 checkpoint tensors are weights, which are symmetric (expected no zero "
                "points vs actual " + std::to_string(t.zeros.size()) + ")");
  out.add(name, DType::kI8, {t.rows, t.cols}, t.codes.data(), t.codes.size());
  out.add(name + "_scale", DType::kF32, {t.rows}, t.scales.data(),
          t.scales.size() * sizeof(float));
  mark_quantized(out, name, "int8");
}

// ---------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------
std::map<std::string, std::string> list_quantized(const SafetensorsReader& file) {
  std::map<std::string, std::string> out;
  const std::string_view prefix = kCheckpointTensorPrefix;
  for (const auto& [key, value] : file.metadata())
    if (key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0)
      out.emplace(key.substr(prefix.size()), value);
  return out;
}

QuantizedTensor load_quantized(const SafetensorsReader& file, const std::string& name) {
  const auto& meta = file.metadata();
  const auto declared = meta.find(kCheckpointTensorPrefix + name);
  const std::string format = declared == meta.end() ? std::string() : declared->second;
  Loader loader(file, name, format);
  if (declared == meta.end())
    loader.fail(std::string("is not declared quantized (no __metadata__ key '") +
                kCheckpointTensorPrefix + printable(name) + "')");
  const auto version = meta.find(kCheckpointVersionKey);
  if (version == meta.end() || version->second != kCheckpointVersion)
    loader.fail(std::string("unsupported ") + kCheckpointVersionKey + " (expected " +
                kCheckpointVersion + " vs actual " +
                (version == meta.end() ? "none" : "'" + printable(version->second) + "'") + ")");
  if (format == "int8") return loader.load_int8();
  if (const auto fp8 = Fp8Format::parse(format)) {
    if (const Status s = fp8->validate(); !s.ok()) loader.fail(strip_prefix(s.message()));
    return loader.load_fp8(*fp8);
  }
  if (const auto w = IntWeightFormat::parse(format)) return loader.load_int(*w);
  loader.fail("unknown format name (expected e.g. w4g128, fp8-128x128, int8 vs actual '" +
              printable(format) + "')");
}

}  // namespace lowbit
