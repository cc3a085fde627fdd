#include "bench/report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "bench/anchors.hpp"
#include "bench/variants.hpp"
#include "lowbit/status.hpp"

namespace lowbit::bench {

namespace {

const char* state_name(Record::State s) {
  switch (s) {
    case Record::State::kOk: return "ok";
    case Record::State::kNotAvailable: return "not available";
    case Record::State::kError: return "error";
  }
  return "?";
}

double gib(uint64_t b) { return double(b) / double(1ull << 30); }
double mib(uint64_t b) { return double(b) / double(1ull << 20); }

// Variant names of suite `s` in the order they first appear in the records.
std::vector<std::string> variants_of(const std::vector<Record>& records, Suite s) {
  std::vector<std::string> names;
  for (const Record& r : records)
    if (r.suite == s && std::find(names.begin(), names.end(), r.variant) == names.end())
      names.push_back(r.variant);
  return names;
}

std::vector<int64_t> ms_of(const std::vector<Record>& records, Suite s) {
  std::set<int64_t> ms;
  for (const Record& r : records)
    if (r.suite == s) ms.insert(r.m);
  return {ms.begin(), ms.end()};
}

const Variant* find_variant(const std::string& name) {
  for (const Variant& v : variant_table())
    if (v.name == name) return &v;
  return nullptr;
}

std::string reference_of(Suite s, const std::string& variant) {
  const Variant* v = find_variant(variant);
  return v != nullptr ? speedup_reference(*v, s) : variant;
}

// Sum of the layers' us for (variant, m); NaN unless every layer of the suite ran.
double layer_sum(const std::vector<Record>& records, Suite s, const std::string& variant,
                 int64_t m, size_t layers) {
  double sum = 0;
  size_t count = 0;
  for (const Record& r : records)
    if (r.suite == s && r.variant == variant && r.m == m) {
      if (!r.ok()) return kNaN;
      sum += r.us;
      ++count;
    }
  return count == layers && layers > 0 ? sum : kNaN;
}

size_t layer_count(const std::vector<Record>& records, Suite s) {
  std::set<std::string> layers;
  for (const Record& r : records)
    if (r.suite == s) layers.insert(r.layer);
  return layers.size();
}

struct Geomean {
  double us = kNaN;
  int shapes = 0;
  int total = 0;
};
Geomean geomean_of(const std::vector<Record>& records, Suite s, const std::string& variant) {
  Geomean g;
  double log_sum = 0;
  for (const Record& r : records)
    if (r.suite == s && r.variant == variant) {
      ++g.total;
      if (r.ok()) {
        log_sum += std::log(r.us);
        ++g.shapes;
      }
    }
  if (g.shapes > 0) g.us = std::exp(log_sum / g.shapes);
  return g;
}

void print_value(std::FILE* f, double v, const char* fmt, int width) {
  if (std::isnan(v))
    std::fprintf(f, "%*s", width, "-");
  else
    std::fprintf(f, fmt, v);
}

// A rate in 8 characters with 3-4 significant digits: GPU figures (1384, 752.3, 2.98) and the
// CPU small suite's (0.00165) alike.
std::string rate_text(double v) {
  char buf[32];
  if (!std::isfinite(v)) return "-";
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 1 ? "%.2f" : "%.3g", v);
  return buf;
}

const char* suite_title(Suite s) {
  switch (s) {
    case Suite::kSuite1: return "Llama-3.1-8B linear layers (ANCHORS.md Suite 1)";
    case Suite::kSuite2: return "fp8 e4m3, 1x128 x 128x128 block scales, bf16 out (ANCHORS.md Suite 2)";
    case Suite::kCpuSmall: return "CPU reference backend, Suite 1 layers / 8 in N and K";
  }
  return "";
}

const char* reference_text(Suite s) {
  switch (s) {
    case Suite::kSuite1: return "cublas_f16 (cublas_bf16 for bf16 activations)";
    case Suite::kSuite2: return "cublaslt_fp8_block";
    case Suite::kCpuSmall: return "cpu_f16";
  }
  return "";
}

}  // namespace

double Report::time_of(Suite s, const std::string& variant, const std::string& layer,
                       int64_t m) const {
  for (const Record& r : records_)
    if (r.suite == s && r.variant == variant && r.layer == layer && r.m == m && r.ok()) return r.us;
  return kNaN;
}

void Report::print_header(std::FILE* f) const {
  const RunInfo& i = info_;
  if (i.backend == "cuda") {
    std::fprintf(f, "lowbit bench: cuda:%d %s (%s, %d SMs, %.1f GiB, L2 %.1f MiB), driver %s, "
                 "runtime %s\n", i.device, i.gpu_name.c_str(), i.arch.c_str(), i.sm_count,
                 gib(i.memory_bytes), mib(i.l2_bytes), i.driver_version.c_str(),
                 i.runtime_version.c_str());
    char replay[64];
    std::snprintf(replay, sizeof replay, ">= %g ms", i.min_replay_ms);
    std::fprintf(f, "method: CUDA graph replays of %s, operands rotated past 3x L2, median of %d "
                 "replays%s\n", i.quick ? "one rotation (--quick: smoke test, not a figure)"
                                        : replay, i.reps,
                 i.check ? ", sampled rows checked against the CPU reference" : "");
  } else {
    std::fprintf(f, "lowbit bench: CPU reference backend (lowbit::Gemm on Device::cpu())\n");
    std::fprintf(f, "method: wall clock, median of %d runs after one warm-up%s\n", i.reps,
                 i.check ? ", rows checked against a plain fp64 loop" : "");
  }
  std::fprintf(f, "copy bandwidth: %.1f GB/s (%s of %.0f MiB, bytes read + written, median of %zu)\n",
               i.copy_gbps, i.copy_what.c_str(), mib(i.copy_bytes), i.copy_us.size());
  if (!i.shapes.empty()) {
    std::string list;
    for (const std::string& sh : i.shapes) list += (list.empty() ? "" : ", ") + sh;
    std::fprintf(f, "layers (--shapes, N x K): %s\n", list.c_str());
  }
}

void Report::print_suite(std::FILE* f, Suite s) const {
  std::fprintf(f, "\n== %s: %s%s ==\n", suite_name(s), suite_title(s),
               info_.shapes.empty() ? "" : ", its layers replaced by --shapes");
  std::fprintf(f, "speedup = reference us / us on the same run and shape; reference: %s\n",
               reference_text(s));
  std::fprintf(f, "%-20s %-11s %5s %6s %6s %10s %8s %8s %6s %8s %8s %-5s %s\n", "variant", "layer",
               "M", "N", "K", "us", "TFLOP/s", "GB/s", "%copy", "speedup", "rel_err", "check",
               "kernel");
  std::vector<std::string> notes;        // shapes not available, short rotations
  std::vector<std::string> unavailable;  // variants no shape of which is available
  for (const std::string& name : variants_of(records_, s)) {
    // Reasons of the shapes that are not available, in order of appearance, with the shapes.
    std::vector<std::pair<std::string, std::vector<std::string>>> na;
    size_t shapes = 0;
    for (const Record& r : records_) {
      if (r.suite != s || r.variant != name) continue;
      ++shapes;
      if (r.state != Record::State::kNotAvailable) continue;
      const std::string& why = r.note_general.empty() ? r.note : r.note_general;
      auto it = std::find_if(na.begin(), na.end(), [&](const auto& p) { return p.first == why; });
      if (it == na.end()) it = na.insert(na.end(), {why, {}});
      it->second.push_back(r.layer + "/M=" + std::to_string(r.m));
    }
    size_t na_count = 0;
    for (const auto& p : na) na_count += p.second.size();
    if (na_count == shapes) {
      unavailable.push_back(name + ": " + na.front().first +
                            (na.size() > 1 ? " (and " + std::to_string(na.size() - 1) +
                                                 " other reasons for some shapes; see --json)"
                                           : ""));
      continue;
    }
    for (const auto& [why, list] : na) {
      std::string text;
      for (const std::string& sh : list) text += (text.empty() ? "" : ", ") + sh;
      notes.push_back("n/a: " + name + " at " + text + ": " + why);
    }
    for (const Record& r : records_) {
      if (r.suite != s || r.variant != name || r.state == Record::State::kNotAvailable) continue;
      std::fprintf(f, "%-20s %-11s %5lld %6lld %6lld ", name.c_str(), r.layer.c_str(),
                   static_cast<long long>(r.m), static_cast<long long>(r.n),
                   static_cast<long long>(r.k));
      if (!r.ok()) {
        std::fprintf(f, "%10s  (see FAILED below)\n", "ERROR");
        continue;
      }
      const double gbps = double(r.bytes()) / r.us / 1e3;
      const double ref_us = time_of(s, reference_of(s, name), r.layer, r.m);
      print_value(f, r.us, "%10.2f", 10);
      std::fprintf(f, " %8s %8s", rate_text(r.flops() / r.us / 1e6).c_str(),
                   rate_text(gbps).c_str());
      print_value(f, 100.0 * gbps / info_.copy_gbps, " %6.1f", 7);
      print_value(f, ref_us / r.us, " %7.2fx", 9);
      print_value(f, r.checked ? r.rel_err : kNaN, " %8.1e", 9);
      std::fprintf(f, " %-5s %s\n", !r.checked ? "-" : r.passed ? "ok" : "FAIL", r.kernel.c_str());
      if (info_.l2_bytes > 0 && r.rotation_bytes > 0 && r.rotation_bytes < 3 * info_.l2_bytes) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "short rotation: %s %s/M=%lld: the operand copies cover "
                      "%.1fx the L2, not 3x (device memory ran short): may be L2-assisted",
                      name.c_str(), r.layer.c_str(), static_cast<long long>(r.m),
                      double(r.rotation_bytes) / double(info_.l2_bytes));
        notes.push_back(buf);
      }
    }
  }
  for (const std::string& n : notes) std::fprintf(f, "  %s\n", n.c_str());
  for (const std::string& u : unavailable) std::fprintf(f, "not available: %s\n", u.c_str());
}

void Report::print_summary(std::FILE* f, Suite s) const {
  const std::vector<std::string> names = variants_of(records_, s);
  const std::vector<int64_t> ms = ms_of(records_, s);
  const bool same_gpu = info_.gpu_name.find(anchors::kGpuName) != std::string::npos;
  // --shapes replaced the suite's layers: its sums and geomeans are over those shapes, and
  // the ANCHORS.md figures (measured on the suite's own shapes) are not shown beside them.
  const bool custom = !info_.shapes.empty();
  auto no_anchors = [&] {
    std::fprintf(f, "(the layers were set by --shapes: the ANCHORS.md figures do not apply and are not shown)\n");
  };
  if (s == Suite::kSuite1 || s == Suite::kCpuSmall) {
    const size_t layers = layer_count(records_, s);
    std::fprintf(f, "\n== %s summary: sum of the %zu layers, us (%s) ==\n", suite_name(s), layers,
                 custom ? "the --shapes layers" : "one decoder layer's linears");
    std::fprintf(f, "%-26s", "variant");
    for (int64_t m : ms) std::fprintf(f, " %10s", ("M=" + std::to_string(m)).c_str());
    std::fprintf(f, "\n");
    for (const std::string& name : names) {
      bool any = false;
      for (int64_t m : ms) any = any || !std::isnan(layer_sum(records_, s, name, m, layers));
      if (!any) continue;
      std::fprintf(f, "%-26s", name.c_str());
      for (int64_t m : ms) print_value(f, layer_sum(records_, s, name, m, layers), " %10.1f", 11);
      std::fprintf(f, "\n");
    }
    if (custom) {
      no_anchors();
      return;
    }
    if (s != Suite::kSuite1) return;
    std::fprintf(f, "%s%s:\n", anchors::kSource,
                 same_gpu ? "" : " -- another kind of GPU than this one: compare with care");
    for (int c = 0; c < anchors::kSuite1Columns; ++c) {
      std::fprintf(f, "  %-24s", anchors::kSuite1ColumnNames[c]);
      for (int64_t m : ms) {
        double v = kNaN;
        for (const anchors::Suite1Row& row : anchors::kSuite1)
          if (row.m == m) v = row.us[c];
        print_value(f, v, " %10.1f", 11);
      }
      std::fprintf(f, "\n");
    }
    return;
  }
  // Suite 2: geometric means.
  std::fprintf(f, "\n== %s summary: geometric mean over the shapes, us ==\n", suite_name(s));
  std::fprintf(f, "%-26s %10s %8s %9s\n", "variant", "geomean", "shapes", "speedup");
  for (const std::string& name : names) {
    const Geomean g = geomean_of(records_, s, name);
    if (g.shapes == 0) continue;
    // Geometric mean of the per-shape speedups, over the shapes both ran.
    const std::string ref = reference_of(s, name);
    double log_sum = 0;
    int both = 0;
    for (const Record& r : records_)
      if (r.suite == s && r.variant == name && r.ok()) {
        const double ref_us = time_of(s, ref, r.layer, r.m);
        if (!std::isnan(ref_us)) {
          log_sum += std::log(ref_us / r.us);
          ++both;
        }
      }
    std::fprintf(f, "%-26s %10.1f %5d/%-2d", name.c_str(), g.us, g.shapes, g.total);
    print_value(f, both > 0 ? std::exp(log_sum / both) : kNaN, " %8.2fx", 10);
    std::fprintf(f, "\n");
  }
  if (custom) {
    no_anchors();
    return;
  }
  std::fprintf(f, "%s%s:\n", anchors::kSource,
               same_gpu ? "" : " -- another kind of GPU than this one: compare with care");
  for (const anchors::Suite2Row& row : anchors::kSuite2)
    std::fprintf(f, "  %-64s %8.1f\n", row.what, row.geomean_us);
}

int Report::print_failures(std::FILE* f, int max_lines) const {
  int count = 0;
  for (const Record& r : records_) {
    if (!r.failed()) continue;
    if (++count > max_lines) continue;
    const std::string what = std::string(suite_name(r.suite)) + " " + r.variant + " " + r.layer +
                             " M=" + std::to_string(r.m) + " N=" + std::to_string(r.n) +
                             " K=" + std::to_string(r.k) + " kernel " + r.kernel;
    if (r.state == Record::State::kError)
      std::fprintf(f, "FAILED %s: %s\n", what.c_str(), r.note.c_str());
    else
      std::fprintf(f, "FAILED check %s: %s\n", what.c_str(), r.check_note.c_str());
  }
  if (count > max_lines)
    std::fprintf(f, "... and %d more failures (every one is in the --json file)\n",
                 count - max_lines);
  return count;
}

void Report::write_json(const std::string& path) const {
  using nlohmann::json;
  const RunInfo& i = info_;
  json j;
  j["tool"] = "lowbit bench";
  j["backend"] = i.backend;
  if (i.backend == "cuda") {
    j["gpu"] = {{"device", i.device},          {"name", i.gpu_name},
                {"arch", i.arch},              {"sm_count", i.sm_count},
                {"memory_bytes", i.memory_bytes}, {"l2_bytes", i.l2_bytes},
                {"driver_version", i.driver_version}, {"runtime_version", i.runtime_version}};
  } else {
    j["no_gpu_reason"] = i.no_gpu_reason;
  }
  j["copy_bandwidth"] = {{"what", i.copy_what}, {"gbps", i.copy_gbps}, {"bytes", i.copy_bytes},
                         {"us", i.copy_us}};
  j["options"] = {{"suites", i.suites}, {"kernels", i.kernels}, {"reps", i.reps},
                  {"quick", i.quick}, {"check", i.check}, {"shapes", i.shapes}};
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json records = json::array();
  for (const Record& r : records_) {
    json o = {{"suite", suite_name(r.suite)}, {"variant", r.variant}, {"kernel", r.kernel},
              {"layer", r.layer},             {"m", r.m},             {"n", r.n},
              {"k", r.k},                     {"state", state_name(r.state)}};
    if (!r.note.empty()) o["note"] = r.note;
    if (r.ok()) {
      const double gbps = double(r.bytes()) / r.us / 1e3;
      o["us"] = num(r.us);
      o["samples_us"] = r.samples_us;
      o["tflops"] = num(r.flops() / r.us / 1e6);
      o["gbps"] = num(gbps);
      o["pct_copy_bandwidth"] = num(100.0 * gbps / i.copy_gbps);
      const std::string ref = reference_of(r.suite, r.variant);
      o["speedup_reference"] = ref;
      o["speedup"] = num(time_of(r.suite, ref, r.layer, r.m) / r.us);
      o["bytes"] = {{"a", r.bytes_a}, {"w", r.bytes_w}, {"out", r.bytes_out}};
      o["copies"] = r.copies;
      o["calls"] = r.calls;
      o["rotation_bytes"] = r.rotation_bytes;
      if (r.checked) {
        o["check"] = {{"rows", r.check_rows},        {"rel_err", num(r.rel_err)},
                      {"tolerance", r.tolerance},    {"format", r.tolerance_format},
                      {"passed", r.passed}};
        if (!r.check_note.empty()) o["check"]["note"] = r.check_note;
      }
    }
    records.push_back(std::move(o));
  }
  j["records"] = std::move(records);

  json summaries = json::object();
  for (Suite s : {Suite::kSuite1, Suite::kSuite2, Suite::kCpuSmall}) {
    const std::vector<std::string> names = variants_of(records_, s);
    if (names.empty()) continue;
    json rows = json::array();
    if (s == Suite::kSuite2) {
      for (const std::string& name : names) {
        const Geomean g = geomean_of(records_, s, name);
        rows.push_back({{"variant", name}, {"geomean_us", num(g.us)}, {"shapes", g.shapes},
                        {"of", g.total}});
      }
    } else {
      const size_t layers = layer_count(records_, s);
      for (const std::string& name : names)
        for (int64_t m : ms_of(records_, s))
          rows.push_back({{"variant", name}, {"m", m},
                          {"sum_us", num(layer_sum(records_, s, name, m, layers))}});
    }
    summaries[suite_name(s)] = std::move(rows);
  }
  j["summaries"] = std::move(summaries);

  json a1 = json::array();
  for (const anchors::Suite1Row& row : anchors::kSuite1) {
    json o = {{"m", row.m}};
    for (int c = 0; c < anchors::kSuite1Columns; ++c)
      o[anchors::kSuite1ColumnNames[c]] = num(row.us[c]);
    a1.push_back(std::move(o));
  }
  json a2 = json::array();
  for (const anchors::Suite2Row& row : anchors::kSuite2)
    a2.push_back({{"what", row.what}, {"geomean_us", row.geomean_us}});
  j["anchors"] = {{"source", anchors::kSource}, {"copy_gbps", anchors::kCopyGBps},
                  {"suite1_sum_us", std::move(a1)}, {"suite2_geomean_us", std::move(a2)}};

  std::ofstream out(path);
  if (!out) throw Error("lowbit: --json: cannot open " + path + " for writing");
  out << j.dump(2) << "\n";
  if (!out) throw Error("lowbit: --json: writing " + path + " failed");
}

}  // namespace lowbit::bench
