// lowbit bench: the entry point and the GPU loop.
#include "bench/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "bench/operands.hpp"
#include "lowbit/status.hpp"

namespace lowbit::bench {

std::vector<const Variant*> select_variants(Suite s, const std::regex& filter) {
  std::set<std::string> wanted;
  for (const Variant& v : variant_table())
    if (in_suite(v, s) && std::regex_search(v.name, filter)) {
      wanted.insert(v.name);
      wanted.insert(speedup_reference(v, s));
    }
  std::vector<const Variant*> out;
  for (const Variant& v : variant_table())
    if (in_suite(v, s) && wanted.count(v.name) > 0) out.push_back(&v);
  return out;
}

void progress(const char* fmt, ...) {
  static const bool tty = isatty(STDERR_FILENO) != 0;
  if (!tty) return;
  std::va_list args;
  va_start(args, fmt);
  std::fprintf(stderr, "\r\033[K");
  std::vfprintf(stderr, fmt, args);
  std::fflush(stderr);
  va_end(args);
}

std::string generalize(std::string message, const GemmDesc& d) {
  const std::string shape = d.describe();
  for (size_t p = message.find(shape); p != std::string::npos; p = message.find(shape, p))
    message.replace(p, shape.size(), "<shape>");
  return message;
}

void judge(Record& rec, const GemmDesc& d, const std::vector<float>& out,
           const std::vector<float>& ref, int64_t rows) {
  const Tolerance tol = tolerance_for(d);
  const CheckResult cr = compare(out, ref);
  rec.checked = true;
  rec.check_rows = rows;
  rec.rel_err = cr.rel_err;
  rec.tolerance = tol.max_rel_err;
  rec.tolerance_format = tol.format;
  char buf[160];
  if (!cr.finite) {
    rec.passed = false;
    rec.check_note = "output not finite (unwritten elements are NaN-poisoned)";
  } else if (cr.all_zero) {
    rec.passed = false;
    rec.check_note = "output is all zero";
  } else if (!(cr.rel_err <= tol.max_rel_err)) {
    rec.passed = false;
    std::snprintf(buf, sizeof buf, "rel_err %.3e > %s tolerance %.1e over %lld rows", cr.rel_err,
                  tol.format, tol.max_rel_err, static_cast<long long>(rows));
    rec.check_note = buf;
  }
}

namespace {

// Makes the Gemm of a variant. Baseline rows pin lowbit's selector to the cuBLASLt baseline
// family, so that they stay the baseline once lowbit's own fp8 kernels exist.
std::unique_ptr<Gemm> make_gemm(const Variant& v, const GemmDesc& desc, Device device) {
  GemmOptions options;
  if (v.runner == Runner::kGemmBaseline) options.family = "cublas_baseline";
  return std::make_unique<Gemm>(desc, device, options);
}

// The operands of one (variant, layer), made when first needed and shared by every M: the
// weight layout never depends on m (gemm.hpp), so each layout is packed once.
struct LayerOperands {
  bool have_weight = false;
  HostWeight weight;
  std::map<std::string, PackedWeight> packed;  // by weight_layout()
  std::vector<float> reference;                // (n, k) fp32, for the check
};

}  // namespace

void run_gpu_suite(GpuBackend& gpu, Suite s, const Options& o, const std::regex& filter,
                   Report& report, bool* stop) {
  const SuiteShapes shapes = suite_shapes(s, o.m, parse_shapes(o.shapes));
  const Device device = Device::cuda(gpu.props().device);
  for (const Variant* v : select_variants(s, filter)) {
    const bool cublas = v->runner == Runner::kCublasGemmEx;
    for (const Layer& layer : shapes.layers) {
      LayerOperands ops;
      const uint64_t weight_seed = make_seed(v->name + "/weight", layer.n, layer.k);
      for (int64_t m : shapes.ms) {
        if (*stop) return;
        Record rec;
        rec.suite = s;
        rec.variant = v->name;
        rec.layer = layer.name;
        rec.m = m;
        rec.n = layer.n;
        rec.k = layer.k;
        const GemmDesc desc = make_desc(*v, m, layer.n, layer.k);
        std::unique_ptr<Gemm> gemm;
        if (cublas) {
          rec.kernel = "cublasGemmEx";
        } else {
          std::string why;
          try {
            gemm = make_gemm(*v, desc, device);
            const Status st = gemm->can_implement();
            rec.kernel = gemm->kernel_name();
            why = st.ok() ? kernel_rule_violation(*v, rec.kernel) : st.message();
          } catch (const std::exception& e) {  // a selector must not throw; say so if one does
            rec.state = Record::State::kError;
            rec.note = std::string("Gemm construction threw: ") + e.what();
            report.add(std::move(rec));
            continue;
          }
          if (!why.empty()) {
            rec.state = Record::State::kNotAvailable;
            rec.note = why;
            rec.note_general = generalize(why, desc);
            report.add(std::move(rec));
            continue;
          }
        }
        progress("[%s] %s %s M=%lld", suite_name(s), v->name.c_str(), layer.name.c_str(),
                 static_cast<long long>(m));
        try {
          GpuCase gc;
          gc.desc = desc;
          gc.gemm = gemm.get();
          gc.seed = make_seed(v->name + "/act", m, layer.n, layer.k);
          gc.weight_seed = weight_seed;
          gc.reps = o.reps;
          gc.target_replay_ms = o.quick ? 0.0 : o.min_replay_ms;
          if (o.check) gc.sample_rows = sample_rows(m);
          if (!cublas) {
            if (!ops.have_weight) {
              ops.weight = random_weight(v->w, layer.n, layer.k, weight_seed);
              ops.have_weight = true;
            }
            const std::string layout = gemm->weight_layout();
            auto it = ops.packed.find(layout);
            if (it == ops.packed.end())
              it = ops.packed.emplace(layout, pack_weight(*gemm, ops.weight)).first;
            gc.weight = &it->second;
          }
          gc.want_dense_weight = cublas && o.check && ops.reference.empty();
          GpuCaseResult res = gpu.run_case(gc);
          rec.us = res.us_per_call;
          rec.samples_us = res.replay_us;
          for (double& u : rec.samples_us) u /= res.calls;  // per call, as rec.us
          rec.copies = res.copies;
          rec.calls = res.calls;
          rec.rotation_bytes = res.rotation_bytes;
          rec.bytes_a = res.bytes_a;
          rec.bytes_w = res.bytes_w;
          rec.bytes_out = res.bytes_out;
          if (o.check) {
            if (ops.reference.empty())
              ops.reference = cublas ? std::move(res.dense_w) : reference_weight(ops.weight);
            const int64_t rows = static_cast<int64_t>(gc.sample_rows.size());
            const std::vector<float> a = act_rows_to_f32(desc.a, desc.m, layer.k, gc.sample_rows,
                                                         res.a_rows.data(), res.a_scales.data());
            const std::vector<float> ref = reference_rows(a, ops.reference, rows, layer.n, layer.k);
            judge(rec, desc, res.out_rows, ref, rows);
          }
        } catch (const std::exception& e) {
          rec.state = Record::State::kError;
          rec.note = e.what();
          rec.note_general = generalize(rec.note, desc);
          if (!gpu.healthy()) {
            rec.note += " [the CUDA context is unusable: stopping]";
            *stop = true;
          }
        }
        report.add(std::move(rec));
      }
    }
  }
  progress("");
}

int run(const Options& o) {
  if (o.reps < 1) throw Error("lowbit: --reps must be at least 1 (got " + std::to_string(o.reps) + ")");
  for (int64_t m : o.m)
    if (m < 1) throw Error("lowbit: --m values must be at least 1 (got " + std::to_string(m) + ")");
  std::regex filter;
  try {
    filter = std::regex(o.kernels.empty() ? std::string(".*") : o.kernels, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw Error("lowbit: --kernels '" + o.kernels + "' is not a regular expression: " + e.what());
  }
  (void)parse_shapes(o.shapes);  // bad entries are refused before any work
  std::vector<Suite> suites;
  if (o.suite == "suite1" || o.suite == "all") suites.push_back(Suite::kSuite1);
  if (o.suite == "suite2" || o.suite == "all") suites.push_back(Suite::kSuite2);
  if (suites.empty())
    throw Error("lowbit: --suite must be suite1, suite2 or all (got '" + o.suite + "')");

  RunInfo info;
  info.kernels = o.kernels;
  info.reps = o.reps;
  info.quick = o.quick;
  info.min_replay_ms = o.min_replay_ms;
  info.check = o.check;
  info.shapes = o.shapes;

  std::string why_not;
  std::unique_ptr<GpuBackend> gpu = open_gpu_backend(o.device, &why_not);
  std::unique_ptr<Report> report;
  if (gpu == nullptr) {
    std::printf("no CUDA device: %s; running the CPU reference backend on a small suite\n",
                why_not.c_str());
    std::fflush(stdout);
    info.backend = "cpu";
    info.no_gpu_reason = why_not;
    info.suites = {suite_name(Suite::kCpuSmall)};
    measure_host_copy(5, info);
    report = std::make_unique<Report>(info);
    report->print_header(stdout);
    run_cpu_suite(o, filter, *report);
    report->print_suite(stdout, Suite::kCpuSmall);
  } else {
    const GpuProps& p = gpu->props();
    info.backend = "cuda";
    info.device = p.device;
    info.gpu_name = p.name;
    info.arch = "sm_" + std::to_string(p.cc_major) + std::to_string(p.cc_minor);
    info.sm_count = p.sm_count;
    info.memory_bytes = p.memory_bytes;
    info.l2_bytes = p.l2_bytes;
    info.driver_version = p.driver_version;
    info.runtime_version = p.runtime_version;
    for (Suite s : suites) info.suites.push_back(suite_name(s));
    const CopyBandwidth bw = gpu->copy_bandwidth(5);
    info.copy_what = "device-to-device cudaMemcpyAsync";
    info.copy_gbps = bw.gbps;
    info.copy_bytes = bw.bytes;
    info.copy_us = bw.us;
    report = std::make_unique<Report>(info);
    report->print_header(stdout);
    bool stop = false;
    for (Suite s : suites) {
      run_gpu_suite(*gpu, s, o, filter, *report, &stop);
      report->print_suite(stdout, s);
      std::fflush(stdout);
    }
  }
  // The summaries come last (the end of the output is what a remote run shows), after the
  // list of failures.
  std::printf("\n");
  const int failures = report->print_failures(stdout, 20);
  if (gpu == nullptr)
    report->print_summary(stdout, Suite::kCpuSmall);
  else
    for (Suite s : suites) report->print_summary(stdout, s);
  if (!o.json_path.empty()) {
    report->write_json(o.json_path);
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  if (failures > 0) std::printf("%d case(s) FAILED\n", failures);
  std::fflush(stdout);
  return failures > 0 ? 1 : 0;
}

}  // namespace lowbit::bench
