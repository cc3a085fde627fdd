// lowbit: safetensors reader (mmap, validated before any tensor byte is read) and writer.
//
// Format: https://github.com/huggingface/safetensors. The checks follow the reference
// implementation's (header length limit, dtype, shape, offsets, sizes) with two deliberate
// differences: gaps between tensors are allowed (the reference demands that the tensors
// tile the data section exactly; nothing here depends on it), and duplicate JSON keys are
// rejected (the reference's serde parser rejects them too, nlohmann silently keeps the last).
#include "lowbit/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "lowbit/numeric.hpp"
#include "lowbit/status.hpp"

namespace lowbit {
namespace {

using json = nlohmann::json;

// The reference implementation's limit on the header (safetensors MAX_HEADER_SIZE).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// A valid header nests three levels (object > tensor entry > shape array). Deeper nesting
// is rejected while parsing so that no later step (dump, copy) can recurse without bound.
constexpr int kMaxJsonDepth = 16;
// Names in messages are cut to this many bytes so a hostile header cannot make them huge.
constexpr std::size_t kMaxQuotedBytes = 160;

// Makes text safe for a one-line message: control bytes become \xNN, long text is cut.
std::string printable(std::string_view text) {
  std::string out;
  static const char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= kMaxQuotedBytes) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

[[noreturn]] void fail_file(const std::string& label, const std::string& problem) {
  throw Error("lowbit: " + printable(label) + ": " + problem);
}

[[noreturn]] void fail_tensor(const std::string& label, std::string_view tensor,
                              const std::string& problem) {
  throw Error("lowbit: " + printable(label) + ": tensor '" + printable(tensor) +
              "': " + problem);
}

std::string syscall_error(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// Product of the shape, or false on a negative entry or int64 overflow.
bool checked_numel(const std::vector<int64_t>& shape, int64_t* out) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return false;
    n *= d;
  }
  *out = n;
  return true;
}

// Bytes of `numel` elements of `t`, or false when that does not fit in int64.
bool checked_nbytes(int64_t numel, DType t, uint64_t* out) {
  const auto size = static_cast<int64_t>(dtype_size(t));
  if (numel > std::numeric_limits<int64_t>::max() / size) return false;
  *out = static_cast<uint64_t>(numel * size);
  return true;
}

uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Parses the header; records the first duplicate key and any too-deep nesting, which
// nlohmann itself accepts. Throws lowbit::Error on a syntax error.
json parse_header_json(const std::string& label, const char* begin, const char* end) {
  std::vector<std::set<std::string>> keys_at_depth;  // keys seen in the open object at depth d
  std::vector<std::string> key_at_depth;             // the last key read at depth d
  std::string duplicate;                             // first duplicate, as a readable path
  bool too_deep = false;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxJsonDepth) {
      too_deep = true;
      return false;  // discard: nothing that deep is kept in memory
    }
    const auto d = static_cast<std::size_t>(depth);
    if (event == json::parse_event_t::object_start) {
      // nlohmann reports object_start at the parent's depth and the object's keys one deeper.
      if (keys_at_depth.size() <= d + 1) keys_at_depth.resize(d + 2);
      keys_at_depth[d + 1].clear();
    } else if (event == json::parse_event_t::key) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (key_at_depth.size() <= d) key_at_depth.resize(d + 1);
      key_at_depth[d] = key;
      if (keys_at_depth.size() <= d) keys_at_depth.resize(d + 1);
      if (!keys_at_depth[d].insert(key).second && duplicate.empty()) {
        std::string path;
        for (std::size_t i = 1; i < d; ++i) path += "'" + printable(key_at_depth[i]) + "' > ";
        duplicate = path + "'" + printable(key) + "'";
      }
    }
    return true;
  };
  json header;
  try {
    header = json::parse(begin, end, callback, /*allow_exceptions=*/true);
  } catch (const json::exception& e) {
    fail_file(label, std::string("header is not valid JSON: ") + printable(e.what()));
  }
  if (too_deep)
    fail_file(label, "header JSON nests deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels (a safetensors header needs 3)");
  if (!duplicate.empty()) fail_file(label, "header has a duplicate key " + duplicate);
  return header;
}

std::string offsets_text(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

TensorInfo parse_tensor_entry(const std::string& label, const std::string& name,
                              const json& entry, uint64_t data_size) {
  if (!entry.is_object())
    fail_tensor(label, name, std::string("entry is not a JSON object (got ") +
                                 entry.type_name() + ")");
  for (const auto& item : entry.items()) {
    const auto& field = item.key();
    if (field != "dtype" && field != "shape" && field != "data_offsets")
      fail_tensor(label, name, "unexpected field '" + printable(field) +
                                   "' (expected only dtype, shape, data_offsets)");
  }
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(field)) fail_tensor(label, name, std::string("missing field '") + field + "'");

  TensorInfo t;
  t.name = name;

  const json& dtype = entry["dtype"];
  if (!dtype.is_string())
    fail_tensor(label, name, std::string("dtype is not a string (got ") + dtype.type_name() + ")");
  const auto& dtype_text = dtype.get_ref<const std::string&>();
  const auto parsed_dtype = dtype_from_safetensors(dtype_text);
  if (!parsed_dtype) fail_tensor(label, name, "unknown dtype '" + printable(dtype_text) + "'");
  t.dtype = *parsed_dtype;

  const json& shape = entry["shape"];
  if (!shape.is_array())
    fail_tensor(label, name, std::string("shape is not an array (got ") + shape.type_name() + ")");
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const json& d = shape[i];
    const std::string where = "shape[" + std::to_string(i) + "]";
    if (d.is_number_unsigned()) {
      const auto v = d.get<uint64_t>();
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail_tensor(label, name, where + " is too large (expected <= 2^63-1 vs actual " +
                                     std::to_string(v) + ")");
      t.shape.push_back(static_cast<int64_t>(v));
    } else if (d.is_number_integer()) {
      fail_tensor(label, name, where + " is negative (expected >= 0 vs actual " +
                                   std::to_string(d.get<int64_t>()) + ")");
    } else {
      fail_tensor(label, name, where + " is not a non-negative integer (got " +
                                   d.type_name() + ")");
    }
  }
  int64_t numel = 0;
  uint64_t expected_bytes = 0;
  if (!checked_numel(t.shape, &numel) || !checked_nbytes(numel, t.dtype, &expected_bytes))
    fail_tensor(label, name, "shape " + shape_text(t.shape) + " of " + dtype_text +
                                 " overflows a 64-bit byte count");

  const json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    fail_tensor(label, name,
                std::string("data_offsets is not an array of two unsigned integers (got ") +
                    (offsets.is_array() ? "an array of " + std::to_string(offsets.size())
                                        : std::string(offsets.type_name())) +
                    ")");
  for (std::size_t i = 0; i < 2; ++i)
    if (!offsets[i].is_number_unsigned())
      fail_tensor(label, name,
                  "data_offsets[" + std::to_string(i) + "] is not an unsigned integer (got " +
                      (offsets[i].is_number_integer() ? std::to_string(offsets[i].get<int64_t>())
                                                      : std::string(offsets[i].type_name())) +
                      ")");
  t.begin = offsets[0].get<uint64_t>();
  t.end = offsets[1].get<uint64_t>();
  if (t.begin > t.end)
    fail_tensor(label, name, "data_offsets begin > end (begin " + std::to_string(t.begin) +
                                 " vs end " + std::to_string(t.end) + ")");
  if (t.end - t.begin != expected_bytes)
    fail_tensor(label, name,
                "data_offsets size does not match shape and dtype (expected " +
                    std::to_string(expected_bytes) + " bytes for " + shape_text(t.shape) +
                    " " + dtype_text + " vs actual " + std::to_string(t.end - t.begin) +
                    " from data_offsets " + offsets_text(t.begin, t.end) + ")");
  if (t.end > data_size)
    fail_tensor(label, name,
                "data_offsets past the end of the data section (expected end <= " +
                    std::to_string(data_size) + " vs actual " + std::to_string(t.end) + ")");
  return t;
}

}  // namespace

int64_t TensorInfo::numel() const {
  int64_t n = 0;
  if (!checked_numel(shape, &n))
    throw Error("lowbit: tensor '" + printable(name) + "': shape " + shape_text(shape) +
                " is negative or overflows int64");
  return n;
}

// ---------------------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------------------
struct SafetensorsReader::Impl {
  std::string label;
  const uint8_t* data_section = nullptr;  // first byte after the header
  uint64_t data_size = 0;
  void* mapping = nullptr;  // owned mmap of the whole file, or null (from_memory)
  std::size_t mapping_size = 0;
  std::vector<TensorInfo> tensors;  // sorted by (begin, end, name)
  std::map<std::string, std::size_t, std::less<>> index;
  std::map<std::string, std::string> metadata;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (mapping) munmap(mapping, mapping_size);
  }

  void parse(const uint8_t* bytes, std::size_t size);
};

namespace {
std::string too_short(std::size_t size) {
  return "file is too short for the 8-byte header length (expected >= 8 bytes vs actual " +
         std::to_string(size) + ")";
}
}  // namespace

void SafetensorsReader::Impl::parse(const uint8_t* bytes, std::size_t size) {
  if (size < 8) fail_file(label, too_short(size));
  const uint64_t header_len = load_le64(bytes);
  if (header_len > kMaxHeaderBytes)
    fail_file(label, "header length is over the limit (expected <= " +
                         std::to_string(kMaxHeaderBytes) + " vs actual " +
                         std::to_string(header_len) + ")");
  if (header_len > size - 8)
    fail_file(label, "header length runs past the end of the file (expected <= " +
                         std::to_string(size - 8) + " vs actual " + std::to_string(header_len) +
                         ")");
  const auto* header_begin = reinterpret_cast<const char*>(bytes + 8);
  const json header = parse_header_json(label, header_begin, header_begin + header_len);
  if (!header.is_object())
    fail_file(label, std::string("header is not a JSON object (got ") + header.type_name() + ")");

  data_section = bytes + 8 + header_len;
  data_size = size - 8 - header_len;

  for (const auto& item : header.items()) {
    const std::string& key = item.key();
    const json& value = item.value();
    if (key == "__metadata__") {
      if (!value.is_object())
        fail_file(label, std::string("__metadata__ is not a JSON object (got ") +
                             value.type_name() + ")");
      for (const auto& m : value.items()) {
        if (!m.value().is_string())
          fail_file(label, "__metadata__ value of '" + printable(m.key()) +
                               "' is not a string (got " + m.value().type_name() + ")");
        metadata.emplace(m.key(), m.value().get<std::string>());
      }
      continue;
    }
    tensors.push_back(parse_tensor_entry(label, key, value, data_size));
  }

  std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.end != b.end) return a.end < b.end;
    return a.name < b.name;
  });
  // Zero-size tensors hold no bytes and overlap nothing, wherever their offsets point.
  const TensorInfo* last = nullptr;  // the non-empty tensor reaching furthest so far
  for (const auto& t : tensors) {
    if (t.begin == t.end) continue;
    if (last && t.begin < last->end)
      fail_tensor(label, t.name,
                  "data_offsets " + offsets_text(t.begin, t.end) + " overlap tensor '" +
                      printable(last->name) + "' " + offsets_text(last->begin, last->end) +
                      " (expected begin >= " + std::to_string(last->end) + " vs actual " +
                      std::to_string(t.begin) + ")");
    if (!last || t.end > last->end) last = &t;
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) index.emplace(tensors[i].name, i);
}

SafetensorsReader::SafetensorsReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SafetensorsReader::SafetensorsReader(SafetensorsReader&&) noexcept = default;
SafetensorsReader& SafetensorsReader::operator=(SafetensorsReader&&) noexcept = default;
SafetensorsReader::~SafetensorsReader() = default;

SafetensorsReader SafetensorsReader::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->label = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_file(path, syscall_error("cannot open"));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const std::string msg = syscall_error("cannot stat");
    ::close(fd);
    fail_file(path, msg);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail_file(path, "not a regular file");
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size < 8) {  // also keeps mmap away from empty files, which it refuses
    ::close(fd);
    fail_file(path, too_short(size));
  }
  // The mapping outlives the descriptor. If another process truncates the file while it is
  // mapped, touching the lost pages raises SIGBUS: the usual cost of mmap-based readers.
  void* mapping = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (mapping == MAP_FAILED) {
    const std::string msg = syscall_error("cannot mmap");
    ::close(fd);
    fail_file(path, msg);
  }
  impl->mapping = mapping;
  impl->mapping_size = size;
  if (::close(fd) != 0) fail_file(path, syscall_error("cannot close"));
  impl->parse(static_cast<const uint8_t*>(mapping), size);
  return SafetensorsReader(std::move(impl));
}

SafetensorsReader SafetensorsReader::from_memory(const uint8_t* data, std::size_t size,
                                                 std::string label) {
  auto impl = std::make_unique<Impl>();
  impl->label = std::move(label);
  impl->parse(data, size);
  return SafetensorsReader(std::move(impl));
}

const std::vector<TensorInfo>& SafetensorsReader::tensors() const { return impl_->tensors; }

const TensorInfo* SafetensorsReader::find(std::string_view name) const {
  const auto it = impl_->index.find(name);
  return it == impl_->index.end() ? nullptr : &impl_->tensors[it->second];
}

const TensorInfo& SafetensorsReader::at(std::string_view name) const {
  const TensorInfo* t = find(name);
  if (!t) fail_tensor(impl_->label, name, "not found in the file");
  return *t;
}

const std::map<std::string, std::string>& SafetensorsReader::metadata() const {
  return impl_->metadata;
}

const std::string& SafetensorsReader::path() const { return impl_->label; }

const uint8_t* SafetensorsReader::data(const TensorInfo& t) const {
  // Cheap guard against a TensorInfo that did not come from this reader.
  if (t.begin > t.end || t.end > impl_->data_size)
    fail_tensor(impl_->label, t.name,
                "data_offsets " + offsets_text(t.begin, t.end) +
                    " are outside this file's data section (expected end <= " +
                    std::to_string(impl_->data_size) + " vs actual " + std::to_string(t.end) +
                    ")");
  return impl_->data_section + t.begin;
}

std::vector<float> SafetensorsReader::read_f32(const TensorInfo& t) const {
  if (!dtype_is_float(t.dtype))
    fail_tensor(impl_->label, t.name,
                std::string("read_f32 needs a floating-point dtype (got ") +
                    dtype_safetensors_name(t.dtype) + ")");
  const int64_t numel = t.numel();
  const std::size_t esize = dtype_size(t.dtype);
  if (static_cast<uint64_t>(numel) * esize != t.nbytes())
    fail_tensor(impl_->label, t.name, "byte size does not match shape and dtype (expected " +
                                          std::to_string(numel * esize) + " vs actual " +
                                          std::to_string(t.nbytes()) + ")");
  const uint8_t* src = data(t);
  std::vector<float> out(static_cast<std::size_t>(numel));
  // Tensor bytes need not be aligned to their element size (the header length is arbitrary),
  // so elements are memcpy'd into an aligned scratch block before load_as_f32 reads them.
  constexpr int64_t kChunk = 512;
  uint64_t scratch[kChunk];
  for (int64_t i0 = 0; i0 < numel; i0 += kChunk) {
    const int64_t count = std::min(kChunk, numel - i0);
    std::memcpy(scratch, src + static_cast<std::size_t>(i0) * esize,
                static_cast<std::size_t>(count) * esize);
    for (int64_t j = 0; j < count; ++j)
      out[static_cast<std::size_t>(i0 + j)] = load_as_f32(scratch, t.dtype, j);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------------------
namespace {

// Throws unless `text` is valid UTF-8 (the header must be, and nlohmann's dump checks it).
void require_utf8(const std::string& text, const std::string& what) {
  try {
    (void)json(text).dump();
  } catch (const json::exception&) {
    throw Error("lowbit: " + what + " '" + printable(text) + "' is not valid UTF-8");
  }
}

// Closes `fd` (if open) and removes `tmp` on scope exit unless released.
struct TmpFileGuard {
  std::string tmp;
  int fd = -1;
  bool armed = true;
  ~TmpFileGuard() {
    if (fd >= 0) ::close(fd);
    if (armed) ::unlink(tmp.c_str());
  }
};

void write_all(const std::string& path, int fd, const uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, std::min<std::size_t>(n, std::size_t{1} << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      fail_file(path, syscall_error("cannot write"));
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace

void SafetensorsWriter::add(const std::string& name, DType dtype,
                            const std::vector<int64_t>& shape, const void* data,
                            std::size_t nbytes) {
  if (name.empty()) throw Error("lowbit: safetensors writer: tensor name is empty");
  if (name == "__metadata__")
    throw Error("lowbit: safetensors writer: tensor name '__metadata__' is reserved");
  require_utf8(name, "safetensors writer: tensor name");
  for (const auto& e : entries_)
    if (e.name == name)
      throw Error("lowbit: safetensors writer: tensor '" + printable(name) + "' added twice");
  int64_t numel = 0;
  uint64_t expected = 0;
  if (!checked_numel(shape, &numel) || !checked_nbytes(numel, dtype, &expected))
    throw Error("lowbit: safetensors writer: tensor '" + printable(name) + "': shape " +
                shape_text(shape) + " is negative or overflows");
  if (expected != nbytes)
    throw Error("lowbit: safetensors writer: tensor '" + printable(name) + "': byte size (" +
                "expected " + std::to_string(expected) + " for " + shape_text(shape) + " " +
                dtype_safetensors_name(dtype) + " vs actual " + std::to_string(nbytes) + ")");
  if (nbytes > 0 && data == nullptr)
    throw Error("lowbit: safetensors writer: tensor '" + printable(name) + "': data is null");
  Entry e{name, dtype, shape, {}};
  if (nbytes > 0) {
    const auto* p = static_cast<const uint8_t*>(data);
    e.bytes.assign(p, p + nbytes);
  }
  entries_.push_back(std::move(e));
}

void SafetensorsWriter::set_metadata(const std::string& key, const std::string& value) {
  require_utf8(key, "safetensors writer: metadata key");
  require_utf8(value, "safetensors writer: metadata value");
  metadata_[key] = value;
}

void SafetensorsWriter::write(const std::string& path) const {
  // ordered_json keeps __metadata__ first and the tensors in insertion order, which is also
  // the order of their data offsets.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata_.empty()) {
    auto& meta = header["__metadata__"] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata_) meta[k] = v;
  }
  uint64_t offset = 0;
  for (const auto& e : entries_) {
    const uint64_t end = offset + e.bytes.size();
    header[e.name] = {{"dtype", dtype_safetensors_name(e.dtype)},
                      {"shape", e.shape},
                      {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text = header.dump();
  // Pad with spaces (valid trailing JSON whitespace) so that the data section starts at a
  // multiple of 8 bytes, as the reference writer does.
  text.append((8 - text.size() % 8) % 8, ' ');
  uint8_t len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<uint8_t>(text.size() >> (8 * i));

  TmpFileGuard guard;
  guard.tmp = path + ".tmp";
  guard.fd = ::open(guard.tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (guard.fd < 0) {
    guard.armed = false;  // nothing was created
    fail_file(guard.tmp, syscall_error("cannot create"));
  }
  write_all(guard.tmp, guard.fd, len_bytes, 8);
  write_all(guard.tmp, guard.fd, reinterpret_cast<const uint8_t*>(text.data()), text.size());
  for (const auto& e : entries_) write_all(guard.tmp, guard.fd, e.bytes.data(), e.bytes.size());
  if (::fsync(guard.fd) != 0) fail_file(guard.tmp, syscall_error("cannot fsync"));
  const int fd = guard.fd;
  guard.fd = -1;
  if (::close(fd) != 0) fail_file(guard.tmp, syscall_error("cannot close"));
  if (::rename(guard.tmp.c_str(), path.c_str()) != 0)
    fail_file(path, syscall_error(("cannot rename " + printable(guard.tmp) + " to it").c_str()));
  guard.armed = false;
}

}  // namespace lowbit
