// `lowbit inspect FILE [--verify ORIGINAL]`: read a safetensors file back through the
// validating reader, list its tensors, load every lowbit-quantized tensor (checking it), and
// optionally compare it with the checkpoint it was quantized from. fp8 and int8 weights of
// other tools' conventions (import_fp8.hpp, import_int8.hpp) are imported too, and listed with
// the convention found.
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <variant>

#include "lowbit/checkpoint.hpp"
#include "lowbit/import_fp8.hpp"
#include "lowbit/import_int8.hpp"
#include "lowbit/reference.hpp"
#include "lowbit/safetensors.hpp"
#include "tools/lowbit/cli_util.hpp"
#include "tools/lowbit/commands.hpp"

namespace lowbit::cli {
namespace {

struct Options {
  std::string path, verify;
  bool list = false;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<float> dequantize_any(const QuantizedTensor& q) {
  return std::visit([](const auto& t) { return dequantize(t); }, q);
}

void run_inspect(const Options& o, int& exit_code) {
  SafetensorsReader file = SafetensorsReader::open(o.path);
  const auto quantized = list_quantized(file);
  uint64_t data_bytes = 0;
  for (const auto& t : file.tensors()) data_bytes += t.nbytes();
  std::printf("%s: %zu tensors, %.1f MB of data, %zu metadata entries", o.path.c_str(),
              file.tensors().size(), data_bytes / 1e6, file.metadata().size());
  if (!quantized.empty())
    std::printf(", lowbit v%s with %zu quantized tensors",
                file.metadata().at(kCheckpointVersionKey).c_str(), quantized.size());
  std::printf("\n");
  if (o.list)
    for (const auto& t : file.tensors())
      std::printf("  %-60s %-5s %s\n", t.name.c_str(), dtype_name(t.dtype),
                  shape_text(t.shape).c_str());

  std::optional<SafetensorsReader> orig;
  if (!o.verify.empty()) orig.emplace(SafetensorsReader::open(o.verify));
  int bad = 0;
  // fp8 weights in another tool's convention (not declared by lowbit metadata): importing one
  // is the same check as loading a lowbit tensor. A weight that cannot be imported is
  // reported and makes the exit code 1, like a mismatch, without hiding the others.
  for (const std::string& name : fp8_weight_names(file)) {
    if (quantized.count(name)) continue;
    try {
      const Fp8Import imp = import_fp8(file, name);
      std::printf("  %-60s %-12s fp8 checkpoint: %s convention (%s", name.c_str(),
                  imp.weight.format.name().c_str(), fp8_convention_name(imp.source.convention),
                  imp.source.scale.c_str());
      if (imp.input_scale)
        std::printf(", input_scale %.9g", static_cast<double>(*imp.input_scale));
      std::printf(")\n");
    } catch (const Error& e) {
      std::printf("  %-60s NOT IMPORTABLE: %s\n", name.c_str(), e.what());
      ++bad;
    }
  }

  for (const std::string& name : int8_weight_names(file)) {
    if (quantized.count(name)) continue;
    try {
      const Int8Import imp = import_int8(file, name);
      std::printf("  %-60s %-12s int8 checkpoint: %s convention (%s", name.c_str(), "int8",
                  int8_convention_name(imp.source.convention), imp.source.scale.c_str());
      if (imp.input_scale) std::printf(", input_scale %.9g", static_cast<double>(*imp.input_scale));
      if (imp.input_zero_point) std::printf(", input_zero_point %d", *imp.input_zero_point);
      std::printf(")\n");
    } catch (const Error& e) {
      std::printf("  %-60s NOT IMPORTABLE: %s\n", name.c_str(), e.what());
      ++bad;
    }
  }

  // With --verify: the original's fp8 checkpoint weights are compared in their dequantized
  // form, and the scale each was imported from counts as accounted for (lowbit rewrote it as
  // NAME_scale F32, so its bytes may differ).
  std::set<std::string> orig_fp8, orig_int8, orig_consumed;
  if (orig) {
    for (const std::string& name : fp8_weight_names(*orig)) orig_fp8.insert(name);
    for (const std::string& name : int8_weight_names(*orig)) orig_int8.insert(name);
  }
  for (const auto& [name, format] : quantized) {
    const QuantizedTensor q = load_quantized(file, name);  // throws on any inconsistency
    std::printf("  %-60s %-12s loaded", name.c_str(), format.c_str());
    if (orig) {
      const TensorInfo* t = orig->find(name);
      if (t == nullptr) {
        std::printf("  NOT IN %s", o.verify.c_str());
        ++bad;
      } else {
        std::vector<float> x;
        if (orig_fp8.count(name)) {
          const Fp8Import imp = import_fp8(*orig, name);
          orig_consumed.insert(imp.source.scale);
          x = dequantize(imp.weight);
        } else if (orig_int8.count(name)) {
          const Int8Import imp = import_int8(*orig, name);
          orig_consumed.insert(imp.source.scale);
          if (!imp.source.zero_point.empty()) orig_consumed.insert(imp.source.zero_point);
          x = dequantize(imp.weight);
        } else {
          x = orig->read_f32(*t);
        }
        const std::vector<float> deq = dequantize_any(q);
        if (x.size() != deq.size()) {
          std::printf("  SHAPE MISMATCH with the original %s", shape_text(t->shape).c_str());
          ++bad;
        } else {
          const ErrorStats s = error_stats(x.data(), deq.data(), static_cast<int64_t>(x.size()));
          std::printf("  rel_err %.3e  max_abs %.3e  SNR %.2f dB", s.rel_frobenius, s.max_abs,
                      s.snr_db);
        }
      }
    }
    std::printf("\n");
  }
  if (orig) {
    // Every tensor of the original must be there: quantized, or copied byte for byte.
    for (const auto& t : orig->tensors()) {
      if (quantized.count(t.name) || orig_consumed.count(t.name)) continue;
      const TensorInfo* c = file.find(t.name);
      if (c == nullptr || c->dtype != t.dtype || c->shape != t.shape ||
          std::memcmp(file.data(*c), orig->data(t), t.nbytes()) != 0) {
        std::printf("  %-60s DIFFERS from the original or is missing\n", t.name.c_str());
        ++bad;
      }
    }
    std::printf("lowbit: verify: %s against %s: %s\n", o.path.c_str(), o.verify.c_str(),
                bad ? "MISMATCH" : "every tensor accounted for");
  }
  exit_code = bad ? 1 : 0;
}

}  // namespace

void add_inspect_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Read a safetensors file back, validate it, and load its quantized tensors");
  cmd->add_option("file", opts->path, ".safetensors file")->required();
  cmd->add_option("--verify", opts->verify,
                  "the checkpoint FILE was quantized from: report the error of every quantized "
                  "tensor and check that all other tensors were copied unchanged");
  cmd->add_flag("--list,-l", opts->list, "list every tensor (name, dtype, shape)");
  cmd->callback([opts, &exit_code] { run_inspect(*opts, exit_code); });
}

}  // namespace lowbit::cli
