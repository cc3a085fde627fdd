// `lowbit quantize IN OUT --format FMT [--include REGEX]`: quantize the matching 2-D weight
// tensors of a safetensors checkpoint into lowbit's on-disk format (checkpoint.hpp), copy
// every other tensor unchanged, and print per-tensor error statistics.
//
// fp8 checkpoints (import_fp8.hpp: Llama-3.1-FP8 / compressed-tensors per-tensor and
// per-channel, DeepSeek-V3 128x128 blocks) are IMPORTED, never requantized: requantizing fp8
// codes rounds a second time and loses what the checkpoint's own quantizer chose. The rules:
//  * A selected fp8 weight (every F8_E4M3/F8_E5M2 tensor, and any tensor with a NAME_scale_inv)
//    must be importable; if not (no scale, e5m2, bad shape or value...) the command fails with
//    import_fp8's one-line error, since copying it would leave a weight whose scale is lost.
//  * Its codes are copied bit for bit into lowbit's fp8 form (NAME + NAME_scale F32); the
//    scale companion it was read from (NAME_scale or NAME_scale_inv) is not copied again.
//  * Its static activation scale P.input_scale is copied unchanged (same name, dtype, shape),
//    as every loader of these checkpoints expects it.
//  * --format fp8-S with S other than the checkpoint's scaling: the scales move to S's grid
//    when that is exact (fp8_rescale_exact: a per-tensor scale repeated per row or block, ...);
//    otherwise the tensor keeps the checkpoint's scaling. An integer, int8 or e5m2 --format
//    applies to float weights only: the fp8 weight keeps its scaling. Each such tensor's line
//    says which happened and why; neither is an error, and the exit code is 2 only when
//    nothing at all was quantized or imported.
//  * Companions (NAME_scale, NAME_scale_inv, P.input_scale) of every fp8 weight, selected or
//    not, go with their weight and are never quantized on their own, whatever --include says.
//
// int8 W8A8 checkpoints (import_int8.hpp: compressed-tensors per-channel / per-tensor) are
// imported the same way, whatever --format says: a selected I8 weight with a NAME_scale must be
// importable (else import_int8's one-line error); it is written in lowbit's int8 form (NAME I8
// + NAME_scale F32 (n), a per-tensor scale repeated per row), its NAME_zero_point (all zero,
// or the import refuses it) is dropped, and P.input_scale / P.input_zero_point are copied
// unchanged.
#include <chrono>
#include <cstdio>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <variant>

#include "lowbit/checkpoint.hpp"
#include "lowbit/import_fp8.hpp"
#include "lowbit/import_int8.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"
#include "lowbit/safetensors.hpp"
#include "tools/lowbit/cli_util.hpp"
#include "tools/lowbit/commands.hpp"

namespace lowbit::cli {
namespace {

struct QuantSpec {
  std::variant<IntWeightFormat, Fp8Format, std::monostate> format;  // monostate: int8
  std::string name() const {
    if (auto* f = std::get_if<IntWeightFormat>(&format)) return f->name();
    if (auto* f = std::get_if<Fp8Format>(&format)) return f->name();
    return "int8";
  }
};

std::optional<QuantSpec> parse_spec(const std::string& text) {
  if (auto f = IntWeightFormat::parse(text)) return QuantSpec{*f};
  if (auto f = Fp8Format::parse(text)) return QuantSpec{*f};
  if (text == "int8" || text == "w8a8") return QuantSpec{std::monostate{}};
  return std::nullopt;
}

struct Options {
  std::string in, out, format, include = R"(\.weight$)", exclude, scale_dtype;
  bool quiet = false;
};

// Why `t` is not quantized with `spec`, or "" when it is.
std::string skip_reason(const TensorInfo& t, const QuantSpec& spec) {
  if (t.shape.size() != 2) return "not 2-D";
  if (!dtype_is_float(t.dtype) || t.dtype == DType::kE4M3 || t.dtype == DType::kE5M2)
    return std::string("dtype ") + dtype_name(t.dtype) + " is not f32/f16/bf16/f64";
  if (t.shape[0] == 0 || t.shape[1] == 0) return "empty";
  if (auto* f = std::get_if<IntWeightFormat>(&spec.format)) {
    if (f->group_size > 0 && t.shape[1] % f->group_size != 0)
      return "K=" + std::to_string(t.shape[1]) + " is not a multiple of group_size=" +
             std::to_string(f->group_size);
  }
  return "";
}

// Imports the fp8 checkpoint weight `name` and puts it in the scaling --format asks for when
// that is exact; `note` says what was done when the two differ.
Fp8Tensor import_for_format(const SafetensorsReader& in, const std::string& name,
                            const QuantSpec& spec, Fp8Import& imp, std::string& note) {
  imp = import_fp8(in, name);
  Fp8Tensor w = imp.weight;
  const std::string have = w.format.name();
  const auto* want = std::get_if<Fp8Format>(&spec.format);
  if (want == nullptr) {
    note = "; --format " + spec.name() + " is for float weights: fp8 checkpoint weights are "
           "imported, never requantized";
    return w;
  }
  if (want->scaling != w.format.scaling) {
    if (auto moved = fp8_rescale_exact(w, want->scaling)) {
      w = std::move(*moved);
      note = std::string("; scales moved exactly from the checkpoint's ") +
             fp8_scaling_name(imp.weight.format.scaling) + " grid to " +
             fp8_scaling_name(want->scaling);
    } else {
      note = "; kept " + have + ": --format " + want->name() + " would need requantizing (its "
             "scales differ within one cell of the " + fp8_scaling_name(want->scaling) + " grid)";
    }
  }
  if (want->dtype != w.format.dtype)
    note += std::string("; kept e4m3 codes: --format ") + want->name() +
            " would need requantizing to " + dtype_name(want->dtype);
  return w;
}

void run_quantize(const Options& o, int& exit_code) {
  auto spec = parse_spec(o.format);
  if (!spec)
    throw Error("lowbit: quantize: unknown --format '" + o.format +
                "' (examples: w4g128, w4g128-asym, w8, w3g64-fzp, fp8-tensor, fp8-row, "
                "fp8-128x128, int8)");
  if (auto* f = std::get_if<IntWeightFormat>(&spec->format)) {
    if (f->act_order)
      throw Error("lowbit: quantize: act-order formats need a GPTQ g_idx; plain quantization "
                  "produces group order (drop '-act')");
  }
  if (auto* f = std::get_if<Fp8Format>(&spec->format)) {
    if (f->scaling == Fp8Scaling::kBlock1x128)
      throw Error("lowbit: quantize: 1x128 scaling is for activations; weights take "
                  "fp8-tensor, fp8-row or fp8-128x128");
  }
  std::optional<DType> forced_scale;
  if (!o.scale_dtype.empty()) {
    forced_scale = parse_dtype(o.scale_dtype);
    if (!forced_scale || !(*forced_scale == DType::kF16 || *forced_scale == DType::kBF16 ||
                           *forced_scale == DType::kF32))
      throw Error("lowbit: quantize: --scale-dtype must be f16, bf16 or f32, not '" +
                  o.scale_dtype + "'");
  }
  std::regex include, exclude;
  try {
    include = std::regex(o.include);
    if (!o.exclude.empty()) exclude = std::regex(o.exclude);
  } catch (const std::regex_error& e) {
    throw Error(std::string("lowbit: quantize: bad regular expression: ") + e.what());
  }

  const auto t0 = std::chrono::steady_clock::now();
  SafetensorsReader in = SafetensorsReader::open(o.in);
  if (in.metadata().count(kCheckpointVersionKey))
    throw Error("lowbit: quantize: " + o.in + " is already a lowbit quantized checkpoint");
  SafetensorsWriter out;
  for (const auto& [key, value] : in.metadata())
    if (key.rfind("lowbit.", 0) != 0) out.set_metadata(key, value);
  out.set_metadata(kCheckpointVersionKey, "1");

  const auto is_selected = [&](const std::string& name) {
    return std::regex_search(name, include) &&
           (o.exclude.empty() || !std::regex_search(name, exclude));
  };
  // fp8 checkpoint weights (rules at the top of this file). Detection reads headers only and
  // throws for a malformed selected weight before anything is written.
  std::set<std::string> fp8_imports, consumed, companions;
  for (const std::string& name : fp8_weight_names(in)) {
    for (const std::string& c : fp8_companion_names(name))
      if (in.find(c) != nullptr) companions.insert(c);
    if (!is_selected(name)) continue;
    consumed.insert(detect_fp8(in, name).scale);
    fp8_imports.insert(name);
  }
  // int8 checkpoint weights (rules at the top of this file), likewise.
  std::set<std::string> int8_imports;
  for (const std::string& name : int8_weight_names(in)) {
    for (const std::string& c : int8_companion_names(name))
      if (in.find(c) != nullptr) companions.insert(c);
    if (!is_selected(name)) continue;
    const Int8Source src = detect_int8(in, name);
    consumed.insert(src.scale);
    if (!src.zero_point.empty()) consumed.insert(src.zero_point);
    int8_imports.insert(name);
  }

  if (!o.quiet)
    std::printf("%-52s %-13s %-5s %-12s %10s %10s %8s\n", "tensor", "shape", "dtype", "format",
                "rel_err", "max_abs", "SNR dB");
  ProgressBar bar(static_cast<int64_t>(in.tensors().size()), !o.quiet);
  int64_t done = 0, quantized = 0, imported = 0, imported_int8 = 0, skipped = 0;
  for (const TensorInfo& t : in.tensors()) {
    bar.update(done++, t.name);
    if (consumed.count(t.name)) continue;  // written again as its weight's NAME_scale
    if (fp8_imports.count(t.name)) {
      Fp8Import imp;
      std::string note;
      const Fp8Tensor w = import_for_format(in, t.name, *spec, imp, note);
      add_fp8_tensor(out, t.name, w);
      ++imported;
      if (!o.quiet) {
        bar.finish();
        const std::string shape = std::to_string(w.rows) + "x" + std::to_string(w.cols);
        std::printf("%-52s %-13s %-5s %-12s imported (%s convention%s), codes unchanged%s\n",
                    t.name.c_str(), shape.c_str(), dtype_name(w.format.dtype),
                    w.format.name().c_str(), fp8_convention_name(imp.source.convention),
                    imp.input_scale ? ", input_scale copied" : "", note.c_str());
      }
      continue;
    }
    if (int8_imports.count(t.name)) {
      const Int8Import imp = import_int8(in, t.name);
      add_int8_tensor(out, t.name, imp.weight);
      ++imported_int8;
      if (!o.quiet) {
        bar.finish();
        const std::string shape = std::to_string(imp.weight.rows) + "x" + std::to_string(imp.weight.cols);
        std::printf("%-52s %-13s %-5s %-12s imported (%s convention%s%s), codes unchanged\n", t.name.c_str(),
                    shape.c_str(), "i8", "int8", int8_convention_name(imp.source.convention),
                    imp.source.zero_point.empty() ? "" : ", zero weight_zero_point dropped",
                    imp.input_scale ? (imp.input_zero_point ? ", input_scale and input_zero_point copied"
                                                            : ", input_scale copied")
                                    : "");
      }
      continue;
    }
    if (companions.count(t.name)) {  // goes with its fp8 / int8 weight, as it is
      out.add(t.name, t.dtype, t.shape, in.data(t), t.nbytes());
      continue;
    }
    const bool selected = is_selected(t.name);
    const std::string why = selected ? skip_reason(t, *spec) : "not selected";
    if (!why.empty()) {
      out.add(t.name, t.dtype, t.shape, in.data(t), t.nbytes());
      if (selected) {
        ++skipped;
        if (!o.quiet) {
          bar.finish();
          std::printf("%-52s kept unquantized: %s\n", t.name.c_str(), why.c_str());
        }
      }
      continue;
    }
    const int64_t n = t.shape[0], k = t.shape[1];
    const std::vector<float> x = in.read_f32(t);
    std::vector<float> deq;
    if (auto* f = std::get_if<IntWeightFormat>(&spec->format)) {
      IntWeightFormat fmt = *f;
      fmt.scale_dtype = forced_scale ? *forced_scale
                                     : (t.dtype == DType::kBF16 ? DType::kBF16 : DType::kF16);
      IntWeight w = quantize_int(x.data(), n, k, fmt);
      deq = dequantize(w);
      add_int_weight(out, t.name, w);
    } else if (auto* f = std::get_if<Fp8Format>(&spec->format)) {
      Fp8Tensor q = quantize_fp8(x.data(), n, k, *f);
      deq = dequantize(q);
      add_fp8_tensor(out, t.name, q);
    } else {
      Int8Tensor q = quantize_int8(x.data(), n, k, /*zero_point=*/false);
      deq = dequantize(q);
      add_int8_tensor(out, t.name, q);
    }
    ++quantized;
    const ErrorStats s = error_stats(x.data(), deq.data(), n * k);
    if (!o.quiet) {
      bar.finish();
      const std::string shape = std::to_string(n) + "x" + std::to_string(k);
      std::printf("%-52s %-13s %-5s %-12s %10.3e %10.3e %8.2f\n", t.name.c_str(), shape.c_str(),
                  dtype_name(t.dtype), spec->name().c_str(), s.rel_frobenius, s.max_abs,
                  s.snr_db);
    }
  }
  bar.finish();
  out.write(o.out);
  {
    // Read the result back through the validating loader: what we wrote must load.
    SafetensorsReader check = SafetensorsReader::open(o.out);
    for (const auto& entry : list_quantized(check)) load_quantized(check, entry.first);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string imports =
      imported == 0 ? std::string()
                    : ", imported " + std::to_string(imported) +
                          " fp8 checkpoint tensor(s) without requantizing";
  if (imported_int8 > 0)
    imports += ", imported " + std::to_string(imported_int8) + " int8 checkpoint tensor(s) without requantizing";
  std::printf("lowbit: quantized %lld tensor(s) to %s%s, kept %lld selected tensor(s) "
              "unquantized, wrote %s (%.1f s)\n",
              static_cast<long long>(quantized), spec->name().c_str(), imports.c_str(),
              static_cast<long long>(skipped), o.out.c_str(), secs);
  if (quantized + imported + imported_int8 == 0) {
    std::fprintf(stderr, "lowbit: quantize: no tensor matched --include '%s' and could be "
                         "quantized\n", o.include.c_str());
    exit_code = 2;
  }
}

}  // namespace

void add_quantize_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "quantize", "Quantize the 2-D weight tensors of a safetensors checkpoint (fp8 checkpoint "
                  "and int8 checkpoint weights are imported, not requantized: docs/formats.md "
                  "sections 9 and 10)");
  cmd->add_option("input", opts->in, "input .safetensors file")->required();
  cmd->add_option("output", opts->out, "output .safetensors file")->required();
  cmd->add_option("--format,-f", opts->format,
                  "w<bits>[g<group>][-asym|-fzp] (bits 1..8, group 32/64/128, none = "
                  "per-channel), fp8-tensor, fp8-row, fp8-128x128 [-e5m2], int8")
      ->required();
  cmd->add_option("--include", opts->include,
                  "regular expression selecting tensor names (default: '\\.weight$')");
  cmd->add_option("--exclude", opts->exclude, "regular expression of names to leave as they are");
  cmd->add_option("--scale-dtype", opts->scale_dtype,
                  "scale dtype of integer formats: f16, bf16, f32 (default: the tensor's "
                  "dtype if f16/bf16, else f16)");
  cmd->add_flag("--quiet,-q", opts->quiet, "print only the summary line");
  cmd->callback([opts, &exit_code] { run_quantize(*opts, exit_code); });
}

}  // namespace lowbit::cli
