// libFuzzer target: the safetensors reader and the lowbit checkpoint loader on arbitrary bytes.
//
// Every input must either parse or throw lowbit::Error; any other exception, crash, leak or
// sanitizer report is a bug. After a successful parse every tensor is touched (first and
// last byte, fp32 conversion of float tensors) and every declared quantized tensor is loaded,
// so that the validation done before those reads is what keeps them in bounds.
#include <cstddef>
#include <cstdint>

#include "lowbit/checkpoint.hpp"
#include "lowbit/safetensors.hpp"
#include "lowbit/status.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto file = lowbit::SafetensorsReader::from_memory(data, size, "fuzz");
    volatile uint8_t sink = 0;
    for (const auto& t : file.tensors()) {
      const uint8_t* p = file.data(t);
      if (t.nbytes() > 0) sink = static_cast<uint8_t>(sink ^ p[0] ^ p[t.nbytes() - 1]);
      if (lowbit::dtype_is_float(t.dtype)) {
        try {
          const auto values = file.read_f32(t);
          if (!values.empty()) sink = static_cast<uint8_t>(sink ^ (values.back() > 0.0f));
        } catch (const lowbit::Error&) {
        }
      }
      (void)file.find(t.name);
    }
    for (const auto& [name, format] : lowbit::list_quantized(file)) {
      try {
        (void)lowbit::load_quantized(file, name);
      } catch (const lowbit::Error&) {
      }
    }
  } catch (const lowbit::Error&) {
  }
  return 0;
}
