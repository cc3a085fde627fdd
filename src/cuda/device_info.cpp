// lowbit/device.hpp for the CUDA build, and the GPU spec table of the heuristics
// (cuda/heuristics/gpu_spec.hpp).
//
// Nothing in the public functions throws: on a machine without a GPU or without a driver
// the lists come back empty and cuda_status() says why, in the runtime's own words.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/common/check.hpp"
#include "cuda/families.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "lowbit/device.hpp"

#ifndef LOWBIT_CUDA_ARCHS
#error "LOWBIT_CUDA_ARCHS (the CMake CUDA architecture list, comma separated) must be defined"
#endif

namespace lowbit {
namespace {

// "13.0" from the runtime's 13000 encoding (1000 * major + 10 * minor).
std::string version_text(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// cudaGetDeviceCount, with the runtime's reason when it fails. A failure here (no device,
// no driver, a driver older than the runtime) is not sticky; the last error is cleared so
// it does not leak into a later cudaGetLastError().
struct DeviceCount {
  int count = 0;
  std::string why_none;  // empty when count > 0
};

DeviceCount query_device_count() {
  DeviceCount r;
  const cudaError_t e = cudaGetDeviceCount(&r.count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    r.count = 0;
    r.why_none = std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
  } else if (r.count == 0) {
    r.why_none = "cudaGetDeviceCount found 0 devices";
  }
  return r;
}

std::string plural_devices(int n) {
  return std::to_string(n) + (n == 1 ? " CUDA device" : " CUDA devices");
}

GpuInfo read_gpu_info(int device) {
  cudaDeviceProp p{};
  LOWBIT_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  GpuInfo g;
  g.index = device;
  g.name = p.name;
  g.cc_major = p.major;
  g.cc_minor = p.minor;
  g.sm_count = p.multiProcessorCount;
  g.memory_bytes = p.totalGlobalMem;
  g.l2_bytes = static_cast<uint64_t>(p.l2CacheSize);
  g.smem_per_block_optin = static_cast<int>(p.sharedMemPerBlockOptin);
  g.smem_per_sm = static_cast<int>(p.sharedMemPerMultiprocessor);
  g.memory_bus_bits = p.memoryBusWidth;
  // CUDA 13 removed cudaDeviceProp::memoryClockRate; the attribute remains.
  LOWBIT_CUDA_CHECK(
      cudaDeviceGetAttribute(&g.memory_clock_khz, cudaDevAttrMemoryClockRate, device));
  return g;
}

// What the heuristics need, from what the device reports.
cuda::GpuSpec spec_from_info(const GpuInfo& g, int regs_per_sm) {
  cuda::GpuSpec s;
  s.device = g.index;
  s.name = g.name;
  s.cc = g.cc();
  s.sm_count = g.sm_count;
  s.smem_per_block_optin = g.smem_per_block_optin;
  s.smem_per_sm = g.smem_per_sm;
  s.l2_bytes = static_cast<int64_t>(g.l2_bytes);
  s.regs_per_sm = regs_per_sm;
  s.dram_gbps = g.dram_gbps();
  return s;
}

}  // namespace

std::string GpuInfo::arch() const { return "sm_" + std::to_string(cc()); }

bool built_with_cuda() { return true; }

std::vector<std::string> built_cuda_archs() {
  std::vector<std::string> out;
  std::stringstream list(LOWBIT_CUDA_ARCHS);
  std::string item;
  while (std::getline(list, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string cuda_runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  return version_text(v);
}

std::string cuda_driver_version() {
  int v = 0;  // 0 when no driver is installed
  if (cudaDriverGetVersion(&v) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  return version_text(v);
}

std::vector<GpuInfo> list_gpus() {
  std::vector<GpuInfo> gpus;
  try {
    const DeviceCount dc = query_device_count();
    for (int i = 0; i < dc.count; ++i) gpus.push_back(read_gpu_info(i));
  } catch (...) {
    // A device that vanished between the count and the query (or an allocation failure):
    // report what was read; cuda_status() still tells the count.
  }
  return gpus;
}

std::string cuda_status() {
  try {
    const DeviceCount dc = query_device_count();
    if (dc.count > 0) return plural_devices(dc.count);
    return "no CUDA device: " + dc.why_none;
  } catch (...) {
    return "no CUDA device: unknown error";
  }
}

std::vector<KernelFamily> kernel_families(const GpuInfo& gpu) {
  std::vector<KernelFamily> out;
  const cuda::GpuSpec spec = spec_from_info(gpu, 0);
  for (const cuda::FamilyEntry& f : cuda::kernel_family_table()) {
    KernelFamily k;
    k.name = f.name;
    k.description = f.description;
    const Status s = f.runs_on(spec);
    k.available = s.ok();
    k.reason = s.message();
    out.push_back(std::move(k));
  }
  return out;
}

namespace cuda {

const GpuSpec& gpu_spec(int device) {
  // One spec per device, read once; entries are never removed, so references stay valid.
  static std::mutex mu;
  static std::map<int, std::unique_ptr<GpuSpec>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(device);
  if (it != cache.end()) return *it->second;

  const DeviceCount dc = query_device_count();
  if (dc.count == 0) throw Error("lowbit: no CUDA device: " + dc.why_none);
  if (device < 0 || device >= dc.count)
    throw Error("lowbit: CUDA device cuda:" + std::to_string(device) +
                " does not exist (this machine has " + plural_devices(dc.count) + ")");
  int regs = 0;
  LOWBIT_CUDA_CHECK(
      cudaDeviceGetAttribute(&regs, cudaDevAttrMaxRegistersPerMultiprocessor, device));
  auto spec = std::make_unique<GpuSpec>(spec_from_info(read_gpu_info(device), regs));
  const GpuSpec& ref = *spec;
  cache.emplace(device, std::move(spec));
  return ref;
}

// ---------------------------------------------------------------------------------------
// Which machine code a GPU gets from this build.
//
// LOWBIT_CUDA_ARCHS is CMake's CUDA_ARCHITECTURES list with ';' turned into ','. Each entry
// "XY[a|f][-real|-virtual]" embeds, in CMake's meaning:
//   XY          SASS sm_XY and PTX compute_XY      (CMake's default for a bare number)
//   XY-real     SASS sm_XY only
//   XY-virtual  PTX compute_XY only
// When a kernel is launched, the driver picks from the fat binary:
//   1. SASS, if an image runs on the GPU: sm_XY runs on compute capability X.Y..X.9 of the
//      same major (binary compatibility within a major); sm_XYa only on exactly X.Y
//      (architecture-specific features such as wgmma); sm_XYf on the same major, minor >= Y
//      (family-specific, CUDA 12.9+). Among several, the newest.
//   2. Otherwise PTX that it can JIT-compile: compute_XY for any GPU with cc >= XY;
//      compute_XYa only for exactly X.Y; compute_XYf for the same major, minor >= Y.
//      The newest such PTX is used (a JIT at first launch: slow start, same results).
// build_has_code_for(cc, min_arch) answers whether the image the driver would pick was
// compiled for an architecture >= min_arch, i.e. whether kernels guarded by
// `__CUDA_ARCH__ >= min_arch*10` are really there for this GPU. This is the rule this file
// implements; PTX JIT counts (so a Blackwell GPU runs the compute_89 PTX of an
// "80;89;90a" build: has_code_for(100, 80) is true, has_code_for(100, 90) is false because
// compute_90a PTX does not JIT to 10.0).
// "native", "all" and "all-major" cannot be resolved here: they are assumed to cover the GPU.
// ---------------------------------------------------------------------------------------
namespace {

struct ArchEntry {
  int arch = 0;         // 90 for "90a"
  char variant = '\0';  // '\0', 'a' (arch-specific) or 'f' (family-specific)
  bool sass = true;
  bool ptx = true;
};

bool parse_arch(const std::string& text, ArchEntry* out) {
  std::string t = text;
  ArchEntry e;
  const auto dash = t.find('-');
  if (dash != std::string::npos) {
    const std::string kind = t.substr(dash + 1);
    t = t.substr(0, dash);
    if (kind == "real")
      e.ptx = false;
    else if (kind == "virtual")
      e.sass = false;
    else
      return false;
  }
  if (!t.empty() && (t.back() == 'a' || t.back() == 'f')) {
    e.variant = t.back();
    t.pop_back();
  }
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos) return false;
  e.arch = std::stoi(t);
  *out = e;
  return true;
}

bool sass_runs_on(const ArchEntry& e, int cc) {
  if (e.variant == 'a') return cc == e.arch;
  return cc / 10 == e.arch / 10 && cc % 10 >= e.arch % 10;  // plain and 'f': same major
}

bool ptx_jits_to(const ArchEntry& e, int cc) {
  if (e.variant == 'a') return cc == e.arch;
  if (e.variant == 'f') return cc / 10 == e.arch / 10 && cc % 10 >= e.arch % 10;
  return cc >= e.arch;
}

}  // namespace

Status hopper_sm90a_runs_on(const GpuSpec& gpu, const char* who) {
  if (gpu.cc != 90)
    return Status::Fail(std::string(who) + "needs a Hopper GPU (sm_90a: wgmma, TMA); " + gpu.name + " is sm_" +
                        std::to_string(gpu.cc));
  if (!build_has_arch_specific_code_for(90))
    return Status::Fail(std::string(who) +
                        "this build has no sm_90a code (wgmma needs the arch-specific target: "
                        "LOWBIT_CUDA_ARCHITECTURES must list 90a, not only 90)");
  return Status::Ok();
}

bool build_has_arch_specific_code_for(int cc) {
  for (const std::string& item : built_cuda_archs()) {
    if (item == "native" || item == "all" || item == "all-major") return true;
    ArchEntry e;
    if (parse_arch(item, &e) && e.variant == 'a' && e.arch == cc) return true;
  }
  return false;
}

bool build_has_code_for(int cc, int min_arch) {
  int best_sass = -1;
  int best_ptx = -1;
  for (const std::string& item : built_cuda_archs()) {
    if (item == "native" || item == "all" || item == "all-major") return true;
    ArchEntry e;
    if (!parse_arch(item, &e)) continue;
    if (e.sass && sass_runs_on(e, cc)) best_sass = std::max(best_sass, e.arch);
    if (e.ptx && ptx_jits_to(e, cc)) best_ptx = std::max(best_ptx, e.arch);
  }
  const int chosen = best_sass >= 0 ? best_sass : best_ptx;
  return chosen >= 0 && chosen >= min_arch;
}

}  // namespace cuda
}  // namespace lowbit
