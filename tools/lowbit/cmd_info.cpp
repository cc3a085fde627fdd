// `lowbit info [--json]`: what this build is, the GPUs present, and for each GPU the kernel
// families this build can run on it (and why not, for the others). Works in a CPU-only build
// and on machines without a GPU: it then says "no CUDA device: <reason>" and exits 0.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lowbit/device.hpp"
#include "lowbit/version.hpp"
#include "tools/lowbit/commands.hpp"

namespace lowbit::cli {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string or_none(const std::string& s) { return s.empty() ? "none" : s; }

// "no CUDA device: <reason>" whichever way the library words the absence of a GPU.
std::string no_device_line() {
  const std::string status = cuda_status();
  if (status.rfind("no CUDA device", 0) == 0) return status;
  return "no CUDA device: " + status;
}

void print_text() {
  std::printf("lowbit %s\n", kVersion);
  if (built_with_cuda())
    std::printf("build: CUDA on, machine code for %s; CUDA runtime %s, driver %s\n",
                or_none(join(built_cuda_archs(), ", ")).c_str(),
                or_none(cuda_runtime_version()).c_str(), or_none(cuda_driver_version()).c_str());
  else
    std::printf("build: CUDA off (CPU reference backend only)\n");
  const std::vector<GpuInfo> gpus = list_gpus();
  if (gpus.empty()) {
    std::printf("%s\n", no_device_line().c_str());
    return;
  }
  std::printf("%s\n", cuda_status().c_str());
  for (const GpuInfo& g : gpus) {
    std::printf("\nGPU %d: %s\n", g.index, g.name.c_str());
    std::printf("  arch %s, %d SMs, %.1f GiB memory (%d-bit bus, %d MHz: %.0f GB/s theoretical), L2 %.1f MiB, "
                "shared memory %d KiB per block opt-in / %d KiB per SM\n",
                g.arch().c_str(), g.sm_count, double(g.memory_bytes) / double(1ull << 30),
                g.memory_bus_bits, g.memory_clock_khz / 1000, g.dram_gbps(), double(g.l2_bytes) / double(1ull << 20),
                g.smem_per_block_optin / 1024, g.smem_per_sm / 1024);
    const std::vector<KernelFamily> families = kernel_families(g);
    std::printf("  kernel families (%zu):\n", families.size());
    for (const KernelFamily& f : families) {
      std::printf("    %-24s %-13s %s\n", f.name.c_str(),
                  f.available ? "available" : "not available", f.description.c_str());
      if (!f.available && !f.reason.empty()) std::printf("      %s\n", f.reason.c_str());
    }
  }
}

void print_json() {
  using nlohmann::json;
  json j;
  j["version"] = kVersion;
  j["cuda"] = built_with_cuda();
  j["cuda_archs"] = built_cuda_archs();
  j["cuda_runtime_version"] = cuda_runtime_version();
  j["cuda_driver_version"] = cuda_driver_version();
  const std::vector<GpuInfo> gpus = list_gpus();
  j["status"] = gpus.empty() ? no_device_line() : cuda_status();
  json list = json::array();
  for (const GpuInfo& g : gpus) {
    json families = json::array();
    for (const KernelFamily& f : kernel_families(g))
      families.push_back({{"name", f.name},
                          {"description", f.description},
                          {"available", f.available},
                          {"reason", f.reason}});
    list.push_back({{"index", g.index},
                    {"name", g.name},
                    {"arch", g.arch()},
                    {"sm_count", g.sm_count},
                    {"memory_bytes", g.memory_bytes},
                    {"l2_bytes", g.l2_bytes},
                    {"smem_per_block_optin", g.smem_per_block_optin},
                    {"smem_per_sm", g.smem_per_sm},
                    {"memory_bus_bits", g.memory_bus_bits},
                    {"memory_clock_khz", g.memory_clock_khz},
                    {"kernel_families", std::move(families)}});
  }
  j["gpus"] = std::move(list);
  std::printf("%s\n", j.dump(2).c_str());
}

}  // namespace

void add_info_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "info", "Build information, the GPUs present and the kernel families each can run");
  auto json_flag = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json_flag, "Print the same as JSON");
  cmd->callback([json_flag, &exit_code] {
    if (*json_flag)
      print_json();
    else
      print_text();
    exit_code = 0;
  });
}

}  // namespace lowbit::cli
