// The device conversions of cuda/common/smxx_convert.cuh give the host codecs' results
// (lowbit/numeric.hpp) bit for bit: every fp8 and 16-bit code decoded, and ~1M fp32 values
// encoded, ties, overflow, subnormals, infinities and NaNs (with payloads and signs)
// included. The kernels are compiled for every architecture of the build; on the GPU at
// hand the matching image runs (on sm_80 the fp8 conversions take cuda_fp8.hpp's software
// path, on sm_89+ the cvt instructions).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "cuda/common/smxx_convert.cuh"
#include "test_gpu_common.hpp"

namespace lowbit::test {
namespace {

// ------------------------------------------------------------------------------- kernels

// in: n fp32 values; out: their e4m3, e5m2, f16 and bf16 codes.
__global__ void encode_kernel(const float* in, int64_t n, uint8_t* e4m3, uint8_t* e5m2,
                              uint16_t* f16, uint16_t* bf16) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float x = in[i];
    e4m3[i] = cuda::f32_to_e4m3(x);
    e5m2[i] = cuda::f32_to_e5m2(x);
    f16[i] = cuda::f32_to_f16(x);
    bf16[i] = cuda::f32_to_bf16(x);
  }
}

// code i in [0, 65536) decoded as f16 and bf16, and for i < 256 as e4m3 and e5m2 (fp32 bits).
__global__ void decode_kernel(uint32_t* e4m3, uint32_t* e5m2, uint32_t* f16, uint32_t* bf16) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  f16[i] = __float_as_uint(cuda::f16_to_f32(static_cast<uint16_t>(i)));
  bf16[i] = __float_as_uint(cuda::bf16_to_f32(static_cast<uint16_t>(i)));
  if (i < 256) {
    e4m3[i] = __float_as_uint(cuda::e4m3_to_f32(static_cast<uint8_t>(i)));
    e5m2[i] = __float_as_uint(cuda::e5m2_to_f32(static_cast<uint8_t>(i)));
  }
}

// ------------------------------------------------------------------------------- inputs

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Every representable value of a narrow format (given by its decoder), the midpoints
// between neighbours (exact ties in fp32 for every format here) and the fp32 neighbours of
// each midpoint: where RNE and its tie rule decide.
template <typename Decode>
void add_ties(std::vector<float>* v, int codes, Decode decode) {
  std::vector<float> finite;
  for (int c = 0; c < codes; ++c) {
    const float f = decode(static_cast<uint32_t>(c));
    if (std::isfinite(f)) finite.push_back(f);
  }
  std::sort(finite.begin(), finite.end());
  for (size_t i = 0; i < finite.size(); ++i) {
    v->push_back(finite[i]);
    if (i + 1 == finite.size() || finite[i] == finite[i + 1]) continue;  // +0 / -0
    const float mid = static_cast<float>((static_cast<double>(finite[i]) + finite[i + 1]) / 2);
    v->push_back(mid);
    v->push_back(std::nextafter(mid, -INFINITY));
    v->push_back(std::nextafter(mid, INFINITY));
  }
}

std::vector<float> test_inputs() {
  std::vector<float> v;
  add_ties(&v, 256, [](uint32_t c) { return e4m3_to_f32(static_cast<uint8_t>(c)); });
  add_ties(&v, 256, [](uint32_t c) { return e5m2_to_f32(static_cast<uint8_t>(c)); });
  add_ties(&v, 65536, [](uint32_t c) { return f16_to_f32(static_cast<uint16_t>(c)); });
  // bf16: every code of a few binades is enough for ties; random bits cover the rest.
  for (uint32_t c = 0; c < 65536; c += 7) v.push_back(bf16_to_f32(static_cast<uint16_t>(c)));
  for (uint32_t c = 0; c < 65536; c += 97) {
    const uint32_t u = c << 16;
    v.push_back(bits_float(u | 0x8000u));  // bf16 ties
    v.push_back(bits_float(u | 0x8001u));
    v.push_back(bits_float(u | 0x7FFFu));
  }
  // Overflow and saturation edges, infinities, zeros, fp32 subnormals.
  for (float x : {448.0f,
                  449.0f,
                  463.9f,
                  464.0f,
                  464.1f,
                  480.0f,
                  57344.0f,
                  61439.0f,
                  61440.0f,
                  61441.0f,
                  65504.0f,
                  65519.0f,
                  65520.0f,
                  65536.0f,
                  3.0e38f,
                  1e-30f,
                  1e-45f,
                  std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max(),
                  INFINITY,
                  0.0f}) {
    v.push_back(x);
    v.push_back(-x);
  }
  // NaNs: quiet and signalling, with payloads, both signs.
  for (uint32_t payload : {0x400000u, 0x000001u, 0x3FFFFFu, 0x7FFFFFu, 0x12345u, 0x200000u}) {
    v.push_back(bits_float(0x7F800000u | payload));
    v.push_back(bits_float(0xFF800000u | payload));
  }
  // Random fp32 bit patterns (every class), and random values at fp8-like magnitudes.
  std::mt19937 rng(2024);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 600000; ++i) v.push_back(bits_float(bits(rng)));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exp(-24, 20);
  for (int i = 0; i < 300000; ++i) v.push_back(std::ldexp(normal(rng), exp(rng)));
  return v;
}

template <typename T>
std::vector<T> download_as(const DeviceBuffer& b) {
  std::vector<uint8_t> raw = b.download();
  std::vector<T> out(raw.size() / sizeof(T));
  std::memcpy(out.data(), raw.data(), out.size() * sizeof(T));
  return out;
}

// Counts mismatches of device vs host codes and describes the first few.
template <typename Code, typename Host>
void expect_codes(const char* what, const std::vector<float>& in, const std::vector<Code>& dev,
                  Host host) {
  int64_t bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < in.size(); ++i) {
    const Code h = host(in[i]);
    if (h == dev[i]) continue;
    if (bad++ < 5)
      first << "\n  input 0x" << std::hex << float_bits(in[i]) << " (" << in[i] << "): device 0x"
            << static_cast<uint32_t>(dev[i]) << ", host 0x" << static_cast<uint32_t>(h) << std::dec;
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << in.size() << " values differ"
                    << first.str();
}

void expect_decodes(const char* what, int codes, const std::vector<uint32_t>& dev,
                    float (*host)(uint32_t)) {
  int bad = 0;
  std::ostringstream first;
  for (int c = 0; c < codes; ++c) {
    const uint32_t h = float_bits(host(static_cast<uint32_t>(c)));
    if (h == dev[static_cast<size_t>(c)]) continue;
    if (bad++ < 5)
      first << "\n  code 0x" << std::hex << c << ": device 0x" << dev[static_cast<size_t>(c)]
            << ", host 0x" << h << std::dec;
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << codes << " codes differ" << first.str();
}

TEST(smxx_convert, encode_matches_host_codecs) {
  LOWBIT_REQUIRE_GPU();
  const std::vector<float> in = test_inputs();
  const auto n = static_cast<int64_t>(in.size());
  DeviceBuffer d_in(in);
  DeviceBuffer d_e4m3(in.size()), d_e5m2(in.size()), d_f16(in.size() * 2), d_bf16(in.size() * 2);
  encode_kernel<<<1024, 256>>>(d_in.as<float>(), n, d_e4m3.as<uint8_t>(), d_e5m2.as<uint8_t>(),
                               d_f16.as<uint16_t>(), d_bf16.as<uint16_t>());
  LOWBIT_CUDA_CHECK_LAUNCH();
  LOWBIT_CUDA_CHECK(cudaDeviceSynchronize());

  expect_codes("fp32 -> e4m3", in, download_as<uint8_t>(d_e4m3), f32_to_e4m3);
  expect_codes("fp32 -> e5m2", in, download_as<uint8_t>(d_e5m2), f32_to_e5m2);
  expect_codes("fp32 -> f16", in, download_as<uint16_t>(d_f16), f32_to_f16);
  expect_codes("fp32 -> bf16", in, download_as<uint16_t>(d_bf16), f32_to_bf16);
}

TEST(smxx_convert, decode_matches_host_codecs) {
  LOWBIT_REQUIRE_GPU();
  DeviceBuffer d_e4m3(256 * 4), d_e5m2(256 * 4), d_f16(65536 * 4), d_bf16(65536 * 4);
  decode_kernel<<<256, 256>>>(d_e4m3.as<uint32_t>(), d_e5m2.as<uint32_t>(), d_f16.as<uint32_t>(),
                              d_bf16.as<uint32_t>());
  LOWBIT_CUDA_CHECK_LAUNCH();
  LOWBIT_CUDA_CHECK(cudaDeviceSynchronize());

  expect_decodes("e4m3 -> fp32", 256, download_as<uint32_t>(d_e4m3),
                 [](uint32_t c) { return e4m3_to_f32(static_cast<uint8_t>(c)); });
  expect_decodes("e5m2 -> fp32", 256, download_as<uint32_t>(d_e5m2),
                 [](uint32_t c) { return e5m2_to_f32(static_cast<uint8_t>(c)); });
  expect_decodes("f16 -> fp32", 65536, download_as<uint32_t>(d_f16),
                 [](uint32_t c) { return f16_to_f32(static_cast<uint16_t>(c)); });
  expect_decodes("bf16 -> fp32", 65536, download_as<uint32_t>(d_bf16),
                 [](uint32_t c) { return bf16_to_f32(static_cast<uint16_t>(c)); });
}

}  // namespace
}  // namespace lowbit::test
