// lowbit/device.hpp and the GPU spec of the heuristics in a CUDA build: consistent with the
// runtime, and never throwing without a GPU.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/common/device_guard.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "lowbit/gemm.hpp"
#include "test_gpu_common.hpp"

namespace lowbit::test {
namespace {

// Runs with or without a GPU: the list matches what the runtime says.
TEST(device_info, list_gpus_matches_runtime) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  const std::vector<GpuInfo> gpus = list_gpus();
  EXPECT_EQ(static_cast<int>(gpus.size()), e == cudaSuccess ? count : 0);
  const std::string status = cuda_status();
  if (gpus.empty()) {
    EXPECT_EQ(status.rfind("no CUDA device: ", 0), 0u) << status;
  } else {
    EXPECT_NE(status.find("CUDA device"), std::string::npos) << status;
  }
  EXPECT_TRUE(built_with_cuda());
  EXPECT_FALSE(built_cuda_archs().empty());
  EXPECT_FALSE(cuda_runtime_version().empty());
}

// Runs with or without a GPU: asking for a device that does not exist is a clear Status.
TEST(device_info, missing_device_is_a_status) {
  GemmDesc d;
  d.m = 1;
  d.n = 256;
  d.k = 512;
  Gemm g(d, Device::cuda(99));
  ASSERT_FALSE(g.can_implement().ok());
  const std::string why = g.can_implement().message();
  EXPECT_TRUE(why.find("does not exist") != std::string::npos ||
              why.find("no CUDA device") != std::string::npos)
      << why;
  EXPECT_NE(why.find("Device::cpu()"), std::string::npos) << why;
  EXPECT_THROW(cuda::gpu_spec(-1), Error);
}

// Runs without a GPU: the rule of device_info.cpp for the default "80;89;90a" build.
TEST(device_info, build_has_code_for_default_archs) {
  if (built_cuda_archs() != std::vector<std::string>{"80", "89", "90a"})
    GTEST_SKIP() << "built for other architectures";
  EXPECT_TRUE(cuda::build_has_code_for(80, 80));
  EXPECT_TRUE(cuda::build_has_code_for(86, 80));   // sm_80 SASS runs on 8.6
  EXPECT_FALSE(cuda::build_has_code_for(86, 89));  // ... and is the image chosen
  EXPECT_TRUE(cuda::build_has_code_for(89, 89));
  EXPECT_TRUE(cuda::build_has_code_for(90, 90));    // sm_90a SASS
  EXPECT_TRUE(cuda::build_has_code_for(100, 89));   // compute_89 PTX, JIT-compiled
  EXPECT_FALSE(cuda::build_has_code_for(100, 90));  // compute_90a PTX does not JIT to 10.0
  EXPECT_FALSE(cuda::build_has_code_for(75, 70));   // nothing runs on 7.5
  EXPECT_TRUE(cuda::build_has_arch_specific_code_for(90));   // 90a: wgmma kernels exist
  EXPECT_FALSE(cuda::build_has_arch_specific_code_for(89));  // 89 is not arch-specific
  EXPECT_FALSE(cuda::build_has_arch_specific_code_for(100));
}

TEST(device_info, gpus_and_families) {
  LOWBIT_REQUIRE_GPU();
  for (const GpuInfo& g : list_gpus()) {
    SCOPED_TRACE(g.name);
    EXPECT_FALSE(g.name.empty());
    EXPECT_GT(g.cc_major, 0);
    EXPECT_GT(g.sm_count, 0);
    EXPECT_GT(g.memory_bytes, 0u);
    EXPECT_GT(g.l2_bytes, 0u);
    EXPECT_GT(g.smem_per_block_optin, 0);
    EXPECT_EQ(g.arch(), "sm_" + std::to_string(g.cc_major * 10 + g.cc_minor));
    const cuda::GpuSpec& spec = cuda::gpu_spec(g.index);
    EXPECT_EQ(spec.cc, g.cc());
    EXPECT_EQ(spec.sm_count, g.sm_count);
    EXPECT_GT(spec.regs_per_sm, 0);
    EXPECT_EQ(&spec, &cuda::gpu_spec(g.index)) << "the spec is cached";

    const std::vector<KernelFamily> families = kernel_families(g);
    ASSERT_FALSE(families.empty());
    bool has_baseline = false;
    for (const KernelFamily& f : families) {
      EXPECT_FALSE(f.description.empty()) << f.name;
      EXPECT_EQ(f.available, f.reason.empty()) << f.name << ": " << f.reason;
      if (f.name == "cublas_baseline") has_baseline = f.available;
    }
    EXPECT_TRUE(has_baseline);
  }
  EXPECT_FALSE(cuda_driver_version().empty());
}

// Runs with or without a GPU: the guard the families switch devices with (device_guard.hpp).
// Without a GPU (CI) any guard is a failed Status naming the call; with one, a guard for the
// current device switches nothing and finish() passes the caller's status through; with two,
// an exception leaving the scope gives the caller's device back. The failing switch is tested
// without a GPU only: with one, cudaSetDevice(99) is an API error that compute-sanitizer's
// memcheck counts as an error of the run (check 57ea092 did).
TEST(device_info, device_guard_reports_and_restores) {
  int count = 0;
  const bool have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();
  if (!have_gpu) {
    cuda::DeviceGuard bad(0);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().message().rfind("lowbit: CUDA error ", 0), 0u) << bad.status().message();
    EXPECT_THROW(bad.check(), Error);
    EXPECT_TRUE(bad.finish(Status::Ok()).ok());  // nothing was switched, nothing to give back
    GTEST_SKIP() << "no GPU: the rest needs one";
  }
  int before = -1;
  ASSERT_EQ(cudaGetDevice(&before), cudaSuccess);
  {
    cuda::DeviceGuard same(before);
    EXPECT_TRUE(same.ok()) << same.status().message();
    EXPECT_NO_THROW(same.check());
    const Status passed = same.finish(Status::Fail("lowbit: the caller's failure"));
    EXPECT_EQ(passed.message(), "lowbit: the caller's failure");
  }
  int after = -1;
  ASSERT_EQ(cudaGetDevice(&after), cudaSuccess);
  EXPECT_EQ(after, before);
  if (count < 2) GTEST_SKIP() << "one GPU: switching to another and back is not testable here";
  const int other = before == 0 ? 1 : 0;
  try {
    cuda::DeviceGuard guard(other);
    ASSERT_TRUE(guard.ok()) << guard.status().message();
    int now = -1;
    ASSERT_EQ(cudaGetDevice(&now), cudaSuccess);
    EXPECT_EQ(now, other);
    throw std::runtime_error("left by an exception");
  } catch (const std::runtime_error&) {
  }
  ASSERT_EQ(cudaGetDevice(&after), cudaSuccess);
  EXPECT_EQ(after, before);  // the destructor gave the device back
}

}  // namespace
}  // namespace lowbit::test
