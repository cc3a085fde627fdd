// safetensors reader/writer: round trips for every dtype, and one test per kind of corrupt
// file, each asserting a one-line lowbit::Error that names the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "lowbit/numeric.hpp"
#include "lowbit/safetensors.hpp"
#include "lowbit/status.hpp"

namespace lowbit {
namespace {

std::string tmp_path(const std::string& name) {
  std::filesystem::create_directories(LOWBIT_TEST_TMP_DIR);
  return std::string(LOWBIT_TEST_TMP_DIR) + "/safetensors_" + name;
}

// A safetensors image from a header text and a data section.
std::vector<uint8_t> image(const std::string& header, const std::vector<uint8_t>& data = {}) {
  // Sized once and filled in place (GCC 12's -Wstringop-overread misfires on insert()).
  std::vector<uint8_t> out(8 + header.size() + data.size());
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(n >> (8 * i));
  std::copy(header.begin(), header.end(), out.begin() + 8);
  std::copy(data.begin(), data.end(), out.begin() + 8 + static_cast<std::ptrdiff_t>(header.size()));
  return out;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Parses `bytes` expecting lowbit::Error; checks the message is one line that starts with
// "lowbit: <label>: " and contains every piece of `needles`.
void expect_error(const std::vector<uint8_t>& bytes, const std::vector<std::string>& needles,
                  const std::string& label = "case.safetensors") {
  try {
    (void)SafetensorsReader::from_memory(bytes.data(), bytes.size(), label);
    ADD_FAILURE() << "no error; expected one containing '" << needles.at(0) << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind("lowbit: " + label + ": ", 0), 0u) << msg;
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
  }
}

std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

constexpr DType kAllDTypes[] = {DType::kF32, DType::kF16,  DType::kBF16, DType::kE4M3,
                                DType::kE5M2, DType::kI8,  DType::kU8,   DType::kI16,
                                DType::kU16, DType::kI32,  DType::kU32,  DType::kI64,
                                DType::kU64, DType::kF64,  DType::kBool};

TEST(Safetensors, RoundTripEveryDTypeScalarAndZeroSize) {
  std::mt19937 rng(std::random_device{}());
  struct Added {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
  };
  std::vector<Added> added;
  SafetensorsWriter w;
  const std::vector<std::vector<int64_t>> shapes = {{3, 5}, {}, {0, 4}, {7}, {2, 0, 3}, {1, 1, 3}};
  for (DType t : kAllDTypes) {
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      Added a{std::string("t.") + dtype_name(t) + "." + std::to_string(s), t, shapes[s], {}};
      int64_t numel = 1;
      for (auto d : a.shape) numel *= d;
      a.bytes.resize(static_cast<std::size_t>(numel) * dtype_size(t));
      for (auto& b : a.bytes) b = static_cast<uint8_t>(rng());
      w.add(a.name, a.dtype, a.shape, a.bytes.data(), a.bytes.size());
      added.push_back(a);
    }
  }
  w.set_metadata("format", "pt");
  w.set_metadata("note", "unicode \xc3\xa9 ok");
  const std::string path = tmp_path("roundtrip.safetensors");
  w.write(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  // Header padded with spaces to a multiple of 8 bytes: the data section starts aligned.
  const auto raw = read_file(path);
  ASSERT_GE(raw.size(), 8u);
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | raw[i];
  EXPECT_EQ(header_len % 8, 0u);

  const auto r = SafetensorsReader::open(path);
  EXPECT_EQ(r.path(), path);
  EXPECT_EQ(r.metadata().at("format"), "pt");
  EXPECT_EQ(r.metadata().at("note"), "unicode \xc3\xa9 ok");
  ASSERT_EQ(r.tensors().size(), added.size());
  uint64_t prev_end = 0;
  for (const auto& t : r.tensors()) {  // in offset order, contiguous
    EXPECT_EQ(t.begin, prev_end) << t.name;
    prev_end = t.end;
  }
  EXPECT_EQ(prev_end, raw.size() - 8 - header_len);
  for (const auto& a : added) {
    const TensorInfo& t = r.at(a.name);
    EXPECT_EQ(t.dtype, a.dtype) << a.name;
    EXPECT_EQ(t.shape, a.shape) << a.name;
    ASSERT_EQ(t.nbytes(), a.bytes.size()) << a.name;
    if (!a.bytes.empty()) {
      EXPECT_EQ(std::memcmp(r.data(t), a.bytes.data(), a.bytes.size()), 0) << a.name;
    }
    if (a.shape.empty()) {
      EXPECT_EQ(t.numel(), 1) << a.name;
    }
  }
  EXPECT_EQ(r.find("absent"), nullptr);
  EXPECT_THROW((void)r.at("absent"), Error);
}

TEST(Safetensors, ReadF32ConvertsFloatDTypes) {
  const std::vector<float> values = {0.0f, -1.5f, 2.0f, 0.25f, -448.0f, 3.0f, 1.0f};
  SafetensorsWriter w;
  for (DType t : kAllDTypes) {
    if (!dtype_is_float(t)) continue;
    std::vector<uint8_t> bytes(values.size() * dtype_size(t));
    for (std::size_t i = 0; i < values.size(); ++i)
      store_from_f32(bytes.data(), t, static_cast<int64_t>(i), values[i]);
    w.add(dtype_name(t), t, {static_cast<int64_t>(values.size())}, bytes.data(), bytes.size());
  }
  const int32_t ints[2] = {1, 2};
  w.add("ints", DType::kI32, {2}, ints, sizeof(ints));
  const std::string path = tmp_path("read_f32.safetensors");
  w.write(path);
  const auto r = SafetensorsReader::open(path);
  for (const auto& t : r.tensors()) {
    if (t.dtype == DType::kI32) {
      EXPECT_THROW((void)r.read_f32(t), Error);
      continue;
    }
    EXPECT_EQ(r.read_f32(t), values) << t.name;  // all values are exact in every float type
  }
}

TEST(Safetensors, ReadF32FromUnalignedDataSection) {
  // The header is padded so the data section starts 8-aligned; the tensor starts at byte 1 of
  // it, so every F32 element is misaligned.
  const std::vector<float> values = {1.0f, -2.0f, 3.5f};
  std::vector<uint8_t> odd_data(1 + sizeof(float) * values.size(), 0);
  std::memcpy(odd_data.data() + 1, values.data(), sizeof(float) * values.size());
  std::string header = "{" + entry("x", "F32", "[3]", "[1,13]") + "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  const auto bytes = image(header, odd_data);
  const auto r = SafetensorsReader::from_memory(bytes.data(), bytes.size());
  EXPECT_EQ(r.read_f32(r.at("x")), values);
}

TEST(Safetensors, EmptyFilesAndZeroSizeTensorsAreValid) {
  {
    const auto bytes = image("{}");
    const auto r = SafetensorsReader::from_memory(bytes.data(), bytes.size());
    EXPECT_TRUE(r.tensors().empty());
  }
  {
    const auto bytes = image("{\"__metadata__\":{\"a\":\"b\"}," +
                             entry("z", "F16", "[0,3]", "[0,0]") + "," +
                             entry("s", "U8", "[]", "[0,1]") + "," +
                             entry("y", "BF16", "[4,0]", "[1,1]") + "}",
                             {42});
    const auto r = SafetensorsReader::from_memory(bytes.data(), bytes.size());
    ASSERT_EQ(r.tensors().size(), 3u);
    EXPECT_EQ(r.at("s").numel(), 1);
    EXPECT_EQ(*r.data(r.at("s")), 42);
    EXPECT_TRUE(r.read_f32(r.at("z")).empty());
    EXPECT_EQ(r.metadata().at("a"), "b");
  }
  {  // empty writer -> valid file with an empty data section
    SafetensorsWriter w;
    const std::string path = tmp_path("empty.safetensors");
    w.write(path);
    EXPECT_TRUE(SafetensorsReader::open(path).tensors().empty());
  }
}

TEST(Safetensors, OpenAFileOnDiskOfEachCorruption) {
  const std::string path = tmp_path("short.safetensors");
  write_file(path, {1, 2, 3});
  try {
    (void)SafetensorsReader::open(path);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too short"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  try {
    (void)SafetensorsReader::open(tmp_path("does_not_exist.safetensors"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
  }
  try {
    (void)SafetensorsReader::open(LOWBIT_TEST_TMP_DIR);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
}

TEST(Safetensors, CorruptTruncatedFile) {
  expect_error({}, {"too short", "expected >= 8 bytes vs actual 0"});
  expect_error({5, 0, 0, 0}, {"too short", "actual 4"});
}

TEST(Safetensors, CorruptTruncatedHeader) {
  auto bytes = image("{" + entry("w", "F32", "[1]", "[0,4]") + "}", {0, 0, 0, 0});
  bytes.resize(8 + 10);  // cut inside the header
  expect_error(bytes, {"header length runs past the end of the file"});
}

TEST(Safetensors, CorruptHeaderLengthPastEof) {
  auto bytes = image("{}");
  bytes[0] = 200;
  expect_error(bytes, {"header length runs past the end of the file", "expected <= 2 vs actual 200"});
  bytes[0] = 0;
  bytes[4] = 1;  // 2^32: over the 100 MB limit
  expect_error(bytes, {"header length is over the limit"});
}

TEST(Safetensors, CorruptBadJson) {
  expect_error(image("{\"a\":"), {"header is not valid JSON"});
  expect_error(image(""), {"header is not valid JSON"});
  expect_error(image("{\"a\":\"\xff\"}"), {"header is not valid JSON"});  // invalid UTF-8
  std::string deep(100, '[');
  expect_error(image("{\"a\":" + deep + std::string(100, ']') + "}"), {"nests deeper"});
}

TEST(Safetensors, CorruptNonObject) {
  expect_error(image("[1,2]"), {"header is not a JSON object (got array)"});
  expect_error(image("{\"w\":[1]}"), {"tensor 'w'", "entry is not a JSON object"});
}

TEST(Safetensors, CorruptUnknownDType) {
  expect_error(image("{" + entry("w", "F4", "[1]", "[0,1]") + "}", {0}),
               {"tensor 'w'", "unknown dtype 'F4'"});
  expect_error(image("{\"w\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,1]}}", {0}),
               {"tensor 'w'", "dtype is not a string"});
}

TEST(Safetensors, CorruptShapeOffsetMismatch) {
  expect_error(image("{" + entry("w", "F16", "[2,3]", "[0,10]") + "}", std::vector<uint8_t>(12)),
               {"tensor 'w'", "does not match shape and dtype", "expected 12", "actual 10"});
}

TEST(Safetensors, CorruptOffsetsPastEnd) {
  expect_error(image("{" + entry("w", "F32", "[2]", "[4,12]") + "}", std::vector<uint8_t>(8)),
               {"tensor 'w'", "past the end of the data section", "expected end <= 8 vs actual 12"});
  expect_error(image("{" + entry("w", "F32", "[1]", "[8,4]") + "}", std::vector<uint8_t>(8)),
               {"tensor 'w'", "begin > end"});
  expect_error(image("{" + entry("w", "F32", "[1]", "[0]") + "}", std::vector<uint8_t>(8)),
               {"tensor 'w'", "data_offsets is not an array of two"});
  expect_error(image("{" + entry("w", "F32", "[1]", "[-4,0]") + "}", std::vector<uint8_t>(8)),
               {"tensor 'w'", "data_offsets[0] is not an unsigned integer (got -4)"});
}

TEST(Safetensors, CorruptOverlappingTensors) {
  expect_error(image("{" + entry("a", "F32", "[2]", "[0,8]") + "," +
                     entry("b", "F32", "[2]", "[4,12]") + "}",
                     std::vector<uint8_t>(12)),
               {"tensor 'b'", "overlap tensor 'a'", "expected begin >= 8 vs actual 4"});
  // A tensor inside another one (the furthest-reaching tensor is remembered).
  expect_error(image("{" + entry("big", "U8", "[16]", "[0,16]") + "," +
                     entry("x", "U8", "[2]", "[2,4]") + "," + entry("y", "U8", "[2]", "[8,10]") + "}",
                     std::vector<uint8_t>(16)),
               {"overlap tensor 'big'"});
}

TEST(Safetensors, CorruptNegativeShape) {
  expect_error(image("{" + entry("w", "F32", "[-1,2]", "[0,0]") + "}"),
               {"tensor 'w'", "shape[0] is negative", "actual -1"});
  expect_error(image("{" + entry("w", "F32", "[1.5]", "[0,0]") + "}"),
               {"tensor 'w'", "shape[0] is not a non-negative integer"});
  expect_error(image("{" + entry("w", "F32", "3", "[0,12]") + "}"),
               {"tensor 'w'", "shape is not an array"});
}

TEST(Safetensors, CorruptOverflowingShape) {
  expect_error(image("{" + entry("w", "F32", "[4294967296,4294967296]", "[0,0]") + "}"),
               {"tensor 'w'", "overflows"});
  // numel fits int64 but numel * 4 bytes does not.
  expect_error(image("{" + entry("w", "F32", "[4611686018427387904]", "[0,0]") + "}"),
               {"tensor 'w'", "overflows"});
  expect_error(image("{" + entry("w", "F32", "[18446744073709551615]", "[0,0]") + "}"),
               {"tensor 'w'", "shape[0] is too large"});
}

TEST(Safetensors, CorruptDuplicateKey) {
  expect_error(image("{" + entry("w", "U8", "[1]", "[0,1]") + "," +
                     entry("w", "U8", "[1]", "[1,2]") + "}",
                     {0, 0}),
               {"duplicate key 'w'"});
  expect_error(image("{\"w\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
                     {0}),
               {"duplicate key 'w' > 'dtype'"});
}

TEST(Safetensors, CorruptBadMetadataType) {
  expect_error(image("{\"__metadata__\":{\"a\":1}}"), {"__metadata__ value of 'a' is not a string"});
  expect_error(image("{\"__metadata__\":[\"a\"]}"), {"__metadata__ is not a JSON object"});
}

TEST(Safetensors, CorruptEntryFields) {
  expect_error(image("{\"w\":{\"dtype\":\"U8\",\"shape\":[1]}}", {0}), {"tensor 'w'", "missing field 'data_offsets'"});
  expect_error(image("{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1}}", {0}),
               {"tensor 'w'", "unexpected field 'x'"});
}

TEST(Safetensors, MessagesStayOneLineForHostileNames) {
  expect_error(image("{" + entry("a\\nb", "F4", "[1]", "[0,1]") + "}", {0}),
               {"tensor 'a\\x0ab'", "unknown dtype"});
  const std::string label = "dir/with\nnewline";
  try {
    const auto bytes = image("[]");
    (void)SafetensorsReader::from_memory(bytes.data(), bytes.size(), label);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(Safetensors, WriterRejectsBadInput) {
  SafetensorsWriter w;
  const float x[2] = {1, 2};
  w.add("x", DType::kF32, {2}, x, sizeof(x));
  EXPECT_THROW(w.add("x", DType::kF32, {2}, x, sizeof(x)), Error);            // duplicate
  EXPECT_THROW(w.add("y", DType::kF32, {3}, x, sizeof(x)), Error);            // size mismatch
  EXPECT_THROW(w.add("y", DType::kF32, {-1}, x, 0), Error);                   // negative shape
  EXPECT_THROW(w.add("__metadata__", DType::kF32, {2}, x, sizeof(x)), Error);  // reserved
  EXPECT_THROW(w.add("bad\xff", DType::kF32, {2}, x, sizeof(x)), Error);      // not UTF-8
  EXPECT_EQ(w.size(), 1u);
  const std::string path = tmp_path("no_such_dir/out.safetensors");
  try {
    w.write(path);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
  }
}

TEST(Safetensors, WriterReplacesExistingFileAtomically) {
  const std::string path = tmp_path("replace.safetensors");
  write_file(path, {1, 2, 3});
  SafetensorsWriter w;
  const uint8_t b[3] = {7, 8, 9};
  w.add("b", DType::kU8, {3}, b, 3);
  w.write(path);
  const auto r = SafetensorsReader::open(path);
  EXPECT_EQ(r.data(r.at("b"))[2], 9);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

}  // namespace
}  // namespace lowbit
