// lowbit bench: the CPU small suite, for machines without a GPU and CPU-only builds.
//
// Times lowbit::Gemm on Device::cpu() (the CPU reference backend) by the wall clock, median of
// --reps runs after one warm-up. The check cannot use lowbit's reference (the backend IS the
// reference), so it compares with a plain fp64 loop that dequantizes from the canonical form.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

#include "bench/operands.hpp"
#include "bench/runner.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/status.hpp"

namespace lowbit::bench {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// At most 4 rows spread over m, first and last included: the plain loop is slow.
std::vector<int64_t> cpu_check_rows(int64_t m) {
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < 4; ++i) {
    const int64_t r = i * (m - 1) / 3;
    if (rows.empty() || rows.back() != r) rows.push_back(r);
  }
  return rows;
}

}  // namespace

void measure_host_copy(int reps, RunInfo& info) {
  constexpr size_t kBytes = 128ull << 20;  // past any last-level cache of a CI machine
  std::vector<uint8_t> src(kBytes), dst(kBytes);
  for (size_t i = 0; i < kBytes; i += 4096) src[i] = static_cast<uint8_t>(hash64(1, i));
  std::memcpy(dst.data(), src.data(), kBytes);  // warm-up: first touch of dst
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    std::memcpy(dst.data(), src.data(), kBytes);
    us.push_back(us_since(t0));
  }
  volatile uint8_t sink = dst[kBytes / 2];  // keep the copies
  (void)sink;
  info.copy_what = "host memcpy";
  info.copy_bytes = kBytes;
  info.copy_us = us;
  info.copy_gbps = 2.0 * double(kBytes) / (median(us) * 1e-6) / 1e9;
}

void run_cpu_suite(const Options& o, const std::regex& filter, Report& report) {
  const Suite s = Suite::kCpuSmall;
  const SuiteShapes shapes = suite_shapes(s, o.m, parse_shapes(o.shapes));
  for (const Variant* v : select_variants(s, filter)) {
    for (const Layer& layer : shapes.layers) {
      HostWeight weight;
      bool have_weight = false;
      std::map<std::string, PackedWeight> packed;  // by weight_layout()
      for (int64_t m : shapes.ms) {
        Record rec;
        rec.suite = s;
        rec.variant = v->name;
        rec.layer = layer.name;
        rec.m = m;
        rec.n = layer.n;
        rec.k = layer.k;
        rec.calls = 1;
        const GemmDesc desc = make_desc(*v, m, layer.n, layer.k);
        progress("[%s] %s %s M=%lld", suite_name(s), v->name.c_str(), layer.name.c_str(),
                 static_cast<long long>(m));
        try {
          const Gemm gemm(desc, Device::cpu());
          const Status st = gemm.can_implement();
          rec.kernel = gemm.kernel_name();
          if (!st.ok()) {
            rec.state = Record::State::kNotAvailable;
            rec.note = st.message();
            rec.note_general = generalize(rec.note, desc);
            report.add(std::move(rec));
            continue;
          }
          if (!have_weight) {
            weight = random_weight(v->w, layer.n, layer.k,
                                   make_seed(v->name + "/weight", layer.n, layer.k));
            have_weight = true;
          }
          auto it = packed.find(gemm.weight_layout());
          if (it == packed.end())
            it = packed.emplace(gemm.weight_layout(), pack_weight(gemm, weight)).first;
          const PackedWeight& pw = it->second;
          const HostAct act = random_act(desc.a, m, layer.k, make_seed(v->name + "/act", m,
                                                                       layer.n, layer.k));
          // Poisoned output: 0xFF bytes are NaN in f16, bf16 and f32.
          std::vector<uint8_t> out(size_t(m * layer.n) * dtype_size(desc.out_dtype), 0xFF);
          std::vector<uint8_t> workspace(gemm.workspace_size());
          GemmArgs args;
          args.a = act.data.data();
          args.a_scales = act.scales.empty() ? nullptr : act.scales.data();
          args.w = pw.host_view();
          args.out = out.data();
          void* ws = workspace.empty() ? nullptr : workspace.data();
          throw_if_error(gemm.run(args, ws));  // warm-up
          for (int r = 0; r < o.reps; ++r) {
            const auto t0 = Clock::now();
            const Status run_status = gemm.run(args, ws);
            const double us = us_since(t0);
            throw_if_error(run_status);
            rec.samples_us.push_back(us);
          }
          rec.us = median(rec.samples_us);
          rec.bytes_a = act.data.size() + act.scales.size() * sizeof(float);
          rec.bytes_w = pw.data.size() + pw.scales.size() + pw.zeros.size() + pw.index.size();
          rec.bytes_out = out.size();
          if (o.check) {
            const std::vector<int64_t> rows = cpu_check_rows(m);
            const size_t a_row = size_t(layer.k) * dtype_size(desc.a.dtype);
            const size_t o_row = size_t(layer.n) * dtype_size(desc.out_dtype);
            std::vector<uint8_t> a_rows(rows.size() * a_row), o_rows(rows.size() * o_row);
            for (size_t i = 0; i < rows.size(); ++i) {
              std::memcpy(a_rows.data() + i * a_row, act.data.data() + size_t(rows[i]) * a_row, a_row);
              std::memcpy(o_rows.data() + i * o_row, out.data() + size_t(rows[i]) * o_row, o_row);
            }
            const std::vector<float> a = act_rows_to_f32(desc.a, desc.m, layer.k, rows, a_rows.data(),
                                                         act.scales.data());
            const int64_t nrows = static_cast<int64_t>(rows.size());
            const std::vector<float> ref = plain_rows(a, weight, nrows);
            const std::vector<float> got = to_f32(o_rows.data(), desc.out_dtype, nrows * layer.n);
            judge(rec, desc, got, ref, nrows);
          }
        } catch (const std::exception& e) {
          rec.state = Record::State::kError;
          rec.note = e.what();
        }
        report.add(std::move(rec));
      }
    }
  }
  progress("");
}

}  // namespace lowbit::bench
