#include "bench/operands.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <thread>

#include "lowbit/numeric.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"
#include "lowbit/status.hpp"

namespace lowbit::bench {

// splitmix64's finaliser (Steele, Lea, Flood 2014): a bijection with full avalanche, so
// consecutive indices give independent-looking 64-bit words.
static uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t hash64(uint64_t seed, uint64_t index) { return mix64(seed ^ mix64(index)); }

uint64_t make_seed(const std::string& text, int64_t a, int64_t b, int64_t c) {
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a over the text
  for (unsigned char ch : text) h = (h ^ ch) * 0x100000001B3ull;
  h = mix64(h ^ static_cast<uint64_t>(a));
  h = mix64(h ^ static_cast<uint64_t>(b));
  return mix64(h ^ static_cast<uint64_t>(c));
}

void parallel_for(int64_t count, const std::function<void(int64_t, int64_t)>& fn) {
  constexpr int64_t kMinPerThread = 1 << 14;
  const int64_t hw = std::max(1u, std::thread::hardware_concurrency());
  const int64_t threads = std::clamp<int64_t>(count / kMinPerThread, 1, hw);
  if (threads == 1) {
    if (count > 0) fn(0, count);
    return;
  }
  std::vector<std::thread> pool;
  const int64_t per = (count + threads - 1) / threads;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t b = t * per, e = std::min(count, b + per);
    if (b < e) pool.emplace_back(fn, b, e);
  }
  for (auto& th : pool) th.join();
}

namespace {

// Uniform in [0, 1) from the top 24 bits (exact in fp32).
float unit(uint64_t h) { return static_cast<float>(h >> 40) * (1.0f / 16777216.0f); }
float uniform(uint64_t seed, uint64_t i, float lo, float hi) {
  return lo + (hi - lo) * unit(hash64(seed, i));
}

// Fills bytes[i] = f(8 random bits) for i in [0, count), one hash per 8 bytes.
template <typename F>
void fill_bytes(uint8_t* bytes, int64_t count, uint64_t seed, F f) {
  const int64_t words = (count + 7) / 8;
  parallel_for(words, [&](int64_t wb, int64_t we) {
    for (int64_t w = wb; w < we; ++w) {
      uint64_t h = hash64(seed, static_cast<uint64_t>(w));
      const int64_t end = std::min(count, (w + 1) * 8);
      for (int64_t i = w * 8; i < end; ++i, h >>= 8) bytes[i] = f(static_cast<uint8_t>(h));
    }
  });
}

float fp8_max(DType t) { return t == DType::kE5M2 ? kE5M2Max : kE4M3Max; }
float fp8_decode(DType t, uint8_t v) { return t == DType::kE5M2 ? e5m2_to_f32(v) : e4m3_to_f32(v); }

// 256 fp8 codes of values uniform in [-max, max] (the shape quantized data has), so a random
// byte picks a realistic code; no NaN code can come out (the encoders saturate).
std::array<uint8_t, 256> fp8_code_table(DType t) {
  std::array<uint8_t, 256> table{};
  const float mx = fp8_max(t);
  for (int i = 0; i < 256; ++i) {
    const float v = ((static_cast<float>(i) + 0.5f) / 128.0f - 1.0f) * mx;
    table[i] = t == DType::kE5M2 ? f32_to_e5m2(v) : f32_to_e4m3(v);
  }
  return table;
}

// Random positive scales, about `base` (times [0.5, 1.5)), exactly representable in `t`.
std::vector<float> random_scales(int64_t count, uint64_t seed, float base, DType t) {
  std::vector<float> s(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) s[i] = round_to(t, base * uniform(seed, i, 0.5f, 1.5f));
  return s;
}

std::vector<uint16_t> random_dense16(DType t, int64_t count, uint64_t seed) {
  if (t != DType::kF16 && t != DType::kBF16)
    throw Error(std::string("lowbit: bench: dense operands must be f16 or bf16, not ") +
                dtype_name(t));
  std::vector<uint16_t> v(static_cast<size_t>(count));
  parallel_for(count, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float x = uniform(seed, i, -1.0f, 1.0f);
      v[i] = t == DType::kF16 ? f32_to_f16(x) : f32_to_bf16(x);
    }
  });
  return v;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Scale grid of an fp8 tensor (rows, cols): (block rows, block cols) of one scale.
void fp8_block(Fp8Scaling s, int64_t rows, int64_t cols, int64_t* br, int64_t* bc) {
  switch (s) {
    case Fp8Scaling::kPerTensor: *br = rows; *bc = cols; return;
    case Fp8Scaling::kPerRow: *br = 1; *bc = cols; return;
    case Fp8Scaling::kBlock1x128: *br = 1; *bc = kFp8Block; return;
    case Fp8Scaling::kBlock128x128: *br = kFp8Block; *bc = kFp8Block; return;
  }
}

}  // namespace

HostWeight random_weight(const WeightFormat& format, int64_t n, int64_t k, uint64_t seed) {
  HostWeight w;
  w.format = format;
  w.n = n;
  w.k = k;
  const int64_t count = n * k;
  switch (format.kind) {
    case WeightKind::kDense:
      w.dense = random_dense16(format.dense_dtype, count, seed);
      break;
    case WeightKind::kInt: {
      const IntWeightFormat& f = format.int_format;
      IntWeight& iw = w.int_w;
      iw.format = f;
      iw.n = n;
      iw.k = k;
      const int64_t groups = f.group_size == 0 ? 1 : k / f.group_size;
      const int mask = f.max_code();
      iw.codes.resize(static_cast<size_t>(count));
      fill_bytes(iw.codes.data(), count, seed, [mask](uint8_t r) { return uint8_t(r & mask); });
      // (q - z) spans about +-2^(bits-1): scales near 2^(1-bits) keep weights in ~[-1, 1].
      iw.scales = random_scales(n * groups, seed + 1, 2.0f / float(1 << f.bits), f.scale_dtype);
      if (f.zero == ZeroPoint::kInteger) {
        iw.zeros.resize(static_cast<size_t>(n * groups));
        fill_bytes(iw.zeros.data(), n * groups, seed + 2,
                   [mask](uint8_t r) { return uint8_t(r & mask); });
      } else if (f.zero == ZeroPoint::kFloat) {
        iw.zeros_f.resize(static_cast<size_t>(n * groups));
        for (int64_t i = 0; i < n * groups; ++i)
          iw.zeros_f[i] = round_to(f.scale_dtype, uniform(seed + 3, i, 0.0f, float(mask)));
      }
      if (f.act_order) {
        iw.g_idx.resize(static_cast<size_t>(k));
        for (int64_t c = 0; c < k; ++c) iw.g_idx[c] = static_cast<int32_t>(c / f.group_size);
        // A random permutation of the columns' groups, as GPTQ's act-order produces.
        for (int64_t c = k - 1; c > 0; --c)
          std::swap(iw.g_idx[c], iw.g_idx[hash64(seed + 4, c) % static_cast<uint64_t>(c + 1)]);
      }
      break;
    }
    case WeightKind::kFp8: {
      Fp8Tensor& t = w.fp8_w;
      t.format = format.fp8;
      t.rows = n;
      t.cols = k;
      const auto table = fp8_code_table(format.fp8.dtype);
      t.codes.resize(static_cast<size_t>(count));
      fill_bytes(t.codes.data(), count, seed, [&table](uint8_t r) { return table[r]; });
      int64_t br = 0, bc = 0;
      fp8_block(format.fp8.scaling, n, k, &br, &bc);
      t.scales = random_scales(ceil_div(n, br) * ceil_div(k, bc), seed + 1,
                               1.0f / fp8_max(format.fp8.dtype), DType::kF32);
      break;
    }
    case WeightKind::kInt8: {
      Int8Tensor& t = w.int8_w;
      t.rows = n;
      t.cols = k;
      t.codes.resize(static_cast<size_t>(count));
      fill_bytes(reinterpret_cast<uint8_t*>(t.codes.data()), count, seed,
                 [](uint8_t r) { return static_cast<uint8_t>(int8_t(int(r % 255) - 127)); });
      t.scales = random_scales(n, seed + 1, 1.0f / 127.0f, DType::kF32);
      break;
    }
  }
  return w;
}

PackedWeight pack_weight(const Gemm& gemm, const HostWeight& w) {
  switch (w.format.kind) {
    case WeightKind::kDense: return gemm.pack_dense(w.dense.data());
    case WeightKind::kInt: return gemm.pack(w.int_w);
    case WeightKind::kFp8: return gemm.pack(w.fp8_w);
    case WeightKind::kInt8: return gemm.pack(w.int8_w);
  }
  throw Error("lowbit: bench: unknown weight kind");
}

std::vector<float> reference_weight(const HostWeight& w) {
  switch (w.format.kind) {
    case WeightKind::kDense: return to_f32(w.dense.data(), w.format.dense_dtype, w.n * w.k);
    case WeightKind::kInt: return dequantize(w.int_w);
    case WeightKind::kFp8: return dequantize(w.fp8_w);
    case WeightKind::kInt8: return dequantize(w.int8_w);
  }
  throw Error("lowbit: bench: unknown weight kind");
}

int64_t act_scale_count(const ActFormat& a, int64_t m, int64_t k) {
  GemmDesc d;  // the layout run() reads is the library's (gemm.hpp); only a, m, k matter
  d.m = m;
  d.n = 1;
  d.k = k;
  d.a = a;
  return gemm_a_scales_count(d);
}

HostAct random_act(const ActFormat& a, int64_t m, int64_t k, uint64_t seed) {
  HostAct act;
  const int64_t count = m * k;
  act.data.resize(static_cast<size_t>(count) * dtype_size(a.dtype));
  switch (a.dtype) {
    case DType::kF16:
    case DType::kBF16: {
      const auto v = random_dense16(a.dtype, count, seed);
      std::memcpy(act.data.data(), v.data(), act.data.size());
      break;
    }
    case DType::kE4M3:
    case DType::kE5M2: {
      const auto table = fp8_code_table(a.dtype);
      fill_bytes(act.data.data(), count, seed, [&table](uint8_t r) { return table[r]; });
      act.scales = random_scales(act_scale_count(a, m, k), seed + 1, 1.0f / fp8_max(a.dtype),
                                 DType::kF32);
      break;
    }
    case DType::kI8:
      fill_bytes(act.data.data(), count, seed,
                 [](uint8_t r) { return static_cast<uint8_t>(int8_t(int(r % 255) - 127)); });
      act.scales = random_scales(m, seed + 1, 1.0f / 127.0f, DType::kF32);
      break;
    default:
      throw Error(std::string("lowbit: bench: no random activations of dtype ") +
                  dtype_name(a.dtype));
  }
  return act;
}

std::vector<float> act_rows_to_f32(const ActFormat& a, int64_t m, int64_t k,
                                   const std::vector<int64_t>& rows,
                                   const uint8_t* rows_data, const float* scales) {
  const int64_t nrows = static_cast<int64_t>(rows.size());
  std::vector<float> out(static_cast<size_t>(nrows * k));
  const size_t esize = dtype_size(a.dtype);
  // 1x128 scales arrive as run() reads them (gemm.hpp): (ceil(k/128), round_up(m, 4)).
  const int64_t m4 = ceil_div(m, 4) * 4;
  for (int64_t i = 0; i < nrows; ++i) {
    const uint8_t* row = rows_data + static_cast<size_t>(i * k) * esize;
    const int64_t r = rows[i];
    float* o = out.data() + i * k;
    switch (a.dtype) {
      case DType::kE4M3:
      case DType::kE5M2:
        for (int64_t c = 0; c < k; ++c) {
          float s = scales[0];
          if (a.fp8_scaling == Fp8Scaling::kPerRow) s = scales[r];
          if (a.fp8_scaling == Fp8Scaling::kBlock1x128) s = scales[(c / kFp8Block) * m4 + r];
          o[c] = fp8_decode(a.dtype, row[c]) * s;
        }
        break;
      case DType::kI8:
        for (int64_t c = 0; c < k; ++c)
          o[c] = static_cast<float>(static_cast<int8_t>(row[c])) * scales[r];
        break;
      default:
        for (int64_t c = 0; c < k; ++c) o[c] = load_as_f32(row, a.dtype, c);
        break;
    }
  }
  return out;
}

std::vector<int64_t> sample_rows(int64_t m) {
  std::vector<int64_t> rows;
  if (m <= 8) {
    for (int64_t r = 0; r < m; ++r) rows.push_back(r);
    return rows;
  }
  for (int64_t i = 0; i < 8; ++i) rows.push_back(i * (m - 1) / 7);
  return rows;
}

std::vector<float> reference_rows(const std::vector<float>& a_rows, const std::vector<float>& w,
                                  int64_t rows, int64_t n, int64_t k) {
  std::vector<float> c(static_cast<size_t>(rows * n));
  gemm_nt_reference(a_rows.data(), w.data(), nullptr, rows, n, k, c.data(), 0);
  return c;
}

std::vector<float> plain_rows(const std::vector<float>& a_rows, const HostWeight& w, int64_t rows) {
  const int64_t n = w.n, k = w.k;
  std::vector<float> out(static_cast<size_t>(rows * n));
  parallel_for(n, [&](int64_t nb, int64_t ne) {
    std::vector<double> wrow(static_cast<size_t>(k));
    for (int64_t j = nb; j < ne; ++j) {
      // Row j of W, dequantized from the canonical form by the formula of formats.hpp.
      switch (w.format.kind) {
        case WeightKind::kDense:
          for (int64_t c = 0; c < k; ++c) {
            const uint16_t h = w.dense[j * k + c];
            wrow[c] = w.format.dense_dtype == DType::kF16 ? f16_to_f32(h) : bf16_to_f32(h);
          }
          break;
        case WeightKind::kInt: {
          const IntWeight& iw = w.int_w;
          const IntWeightFormat& f = iw.format;
          const int64_t groups = f.group_size == 0 ? 1 : k / f.group_size;
          for (int64_t c = 0; c < k; ++c) {
            const int64_t g = f.act_order ? iw.g_idx[c] : (f.group_size == 0 ? 0 : c / f.group_size);
            const int64_t gi = j * groups + g;
            double z = f.symmetric_zero();
            if (f.zero == ZeroPoint::kInteger) z = iw.zeros[gi];
            if (f.zero == ZeroPoint::kFloat) z = iw.zeros_f[gi];
            wrow[c] = (double(iw.codes[j * k + c]) - z) * double(iw.scales[gi]);
          }
          break;
        }
        case WeightKind::kFp8: {
          const Fp8Tensor& t = w.fp8_w;
          int64_t br = 0, bc = 0;
          fp8_block(t.format.scaling, n, k, &br, &bc);
          const int64_t scols = ceil_div(k, bc);
          for (int64_t c = 0; c < k; ++c)
            wrow[c] = double(fp8_decode(t.format.dtype, t.codes[j * k + c])) *
                      double(t.scales[(j / br) * scols + c / bc]);
          break;
        }
        case WeightKind::kInt8:
          for (int64_t c = 0; c < k; ++c)
            wrow[c] = double(w.int8_w.codes[j * k + c]) * double(w.int8_w.scales[j]);
          break;
      }
      for (int64_t r = 0; r < rows; ++r) {
        const float* a = a_rows.data() + r * k;
        double acc = 0;
        for (int64_t c = 0; c < k; ++c) acc += double(a[c]) * wrow[c];
        out[r * n + j] = static_cast<float>(acc);
      }
    }
  });
  return out;
}

CheckResult compare(const std::vector<float>& out, const std::vector<float>& ref) {
  CheckResult r;
  r.all_zero = true;
  for (float v : out) {
    if (!std::isfinite(v)) r.finite = false;
    if (v != 0.0f) r.all_zero = false;
  }
  r.rel_err = relative_error(out.data(), ref.data(), static_cast<int64_t>(out.size()));
  if (!r.finite) r.rel_err = std::numeric_limits<double>::infinity();
  return r;
}

}  // namespace lowbit::bench
