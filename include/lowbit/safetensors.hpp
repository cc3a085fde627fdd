// lowbit: safetensors reader (memory-mapped, fully validated) and writer.
//
// File layout (https://github.com/huggingface/safetensors): 8-byte little-endian header
// length N, N bytes of UTF-8 JSON, then the data section. Each JSON entry
// {"dtype": "F16", "shape": [..], "data_offsets": [begin, end]} locates one tensor in the
// data section; "__metadata__" maps strings to strings.
//
// The reader checks, before any tensor byte is touched: the header length fits the file,
// the JSON parses and has the expected types, every dtype is known, shape entries are
// non-negative and their product does not overflow, end - begin == numel * dtype size,
// offsets lie inside the data section, and no two tensors overlap. Any violation throws
// lowbit::Error with a one-line message naming the file, the tensor and the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lowbit/dtype.hpp"

namespace lowbit {

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets inside the data section, end exclusive
  uint64_t end = 0;
  int64_t numel() const;
  uint64_t nbytes() const { return end - begin; }
};

class SafetensorsReader {
 public:
  // Memory-maps `path` read-only. Throws lowbit::Error on any problem.
  static SafetensorsReader open(const std::string& path);
  // Parses an in-memory image (not copied: `data` must outlive the reader). Used by the
  // fuzz target and by tests. `label` names the source in error messages.
  static SafetensorsReader from_memory(const uint8_t* data, std::size_t size,
                                       std::string label = "<memory>");

  SafetensorsReader(SafetensorsReader&&) noexcept;
  SafetensorsReader& operator=(SafetensorsReader&&) noexcept;
  ~SafetensorsReader();

  // Tensors in order of their data offsets.
  const std::vector<TensorInfo>& tensors() const;
  const TensorInfo* find(std::string_view name) const;  // null if absent
  const TensorInfo& at(std::string_view name) const;    // throws if absent
  const std::map<std::string, std::string>& metadata() const;

  // Pointer to the tensor's bytes (valid while the reader lives). Not necessarily aligned.
  const uint8_t* data(const TensorInfo& t) const;
  // Copies the tensor out converted to fp32; throws unless its dtype is a float type.
  std::vector<float> read_f32(const TensorInfo& t) const;
  const std::string& path() const;

 private:
  struct Impl;
  explicit SafetensorsReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class SafetensorsWriter {
 public:
  // Copies `nbytes` bytes; nbytes must equal numel(shape) * dtype_size(dtype).
  void add(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
           const void* data, std::size_t nbytes);
  void set_metadata(const std::string& key, const std::string& value);
  // Writes atomically (to path + ".tmp", then rename). Throws lowbit::Error on failure.
  void write(const std::string& path) const;
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
  };
  std::vector<Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace lowbit
