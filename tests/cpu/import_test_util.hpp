// Test helpers shared by the checkpoint importer tests (test_import_fp8.cpp,
// test_import_int8.cpp): one tensor of a safetensors file built in memory, floats stored in a
// given dtype, and the shape of an importer's refusal.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lowbit/dtype.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/status.hpp"

namespace lowbit::test {

struct Part {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

// Floats stored in `dtype` (f32, bf16, f16, f64), rounded as numeric.hpp says.
inline Part floats(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v,
                   DType dtype = DType::kF32) {
  std::vector<uint8_t> bytes(v.size() * dtype_size(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::kF64) {
      const double d = v[i];
      std::memcpy(bytes.data() + 8 * i, &d, 8);
    } else {
      store_from_f32(bytes.data(), dtype, static_cast<int64_t>(i), v[i]);
    }
  }
  return {name, dtype, std::move(shape), std::move(bytes)};
}

// Expects `f()` to throw one line "lowbit: WHERE: KIND weight 'WEIGHT': ..." (kind "fp8",
// "int8"; where the file label) containing every needle.
template <typename F>
void expect_import_error(F f, const std::string& kind, const std::string& where, const std::string& weight,
                         const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << where << ": no error; expected one containing '" << needles.at(0) << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind("lowbit: " + where + ": " + kind + " weight '" + weight + "': ", 0), 0u) << msg;
    for (const auto& n : needles)
      EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
  }
}

}  // namespace lowbit::test
