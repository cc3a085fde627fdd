// stream-floor: what a kernel that only READS the bytes of a Suite-1 layer's packed weights
// takes per call under the bench's method (CUDA-graph replay of many calls, operands rotated
// past 3x L2, median of 5). It answers "how close to the bandwidth floor can any GEMV get at
// this size", i.e. the per-call cost that is not arithmetic. Development probe, not part of
// the library or the bench; build (repository root): nvcc -O3 -arch=sm_90a -std=c++17 -I. tools/dev/stream-floor.cu.
//
// Each block owns a contiguous, balanced range of 16-byte units, reads them with
// ld.global.nc.L1::no_allocate, `kUnroll` loads in flight per thread, XORs them into a
// register and writes one word per block (so the loads cannot be removed). Optional PDL: the
// kernel issues its loads before griddepcontrol.wait and writes after it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tools/dev/graph_timing.cuh"

template <int kUnroll>
__global__ void read_kernel(const uint4* __restrict__ src, size_t units, unsigned* out) {
  const size_t per = (units + gridDim.x - 1) / gridDim.x;
  const size_t b0 = per * blockIdx.x;
  const size_t b1 = b0 + per < units ? b0 + per : units;
  uint32_t acc = 0;
  size_t i = b0 + threadIdx.x;
  const size_t stride = blockDim.x;
  for (; i + (kUnroll - 1) * stride < b1; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                   : "l"(src + i + u * stride));
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < b1; i += stride) {
    uint4 v = src[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
  if (acc == 0x12345678u) out[blockIdx.x] = acc;  // practically never; keeps the loads
}

struct Cfg {
  int blocks_per_sm, threads, unroll;
  bool pdl;
};

static void launch(const Cfg& c, int sms, const uint4* src, size_t units, unsigned* out,
                   cudaStream_t s) {
  cudaLaunchConfig_t lc = {};
  lc.gridDim = dim3(sms * c.blocks_per_sm);
  lc.blockDim = dim3(c.threads);
  lc.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  lc.attrs = attr;
  lc.numAttrs = c.pdl ? 1 : 0;
  if (c.unroll == 4)
    CK(cudaLaunchKernelEx(&lc, read_kernel<4>, src, units, out));
  else if (c.unroll == 8)
    CK(cudaLaunchKernelEx(&lc, read_kernel<8>, src, units, out));
  else
    CK(cudaLaunchKernelEx(&lc, read_kernel<16>, src, units, out));
}

int main() {
  int dev = 0, sms = 0, l2 = 0;
  CK(cudaSetDevice(dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t pool_bytes = 3ull * l2 + (512ull << 20);
  uint8_t* pool = nullptr;
  CK(cudaMalloc(&pool, pool_bytes));
  CK(cudaMemset(pool, 1, pool_bytes));
  unsigned* out = nullptr;
  CK(cudaMalloc(&out, 1 << 20));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  // copy bandwidth (read + write), 1 GiB, as the bench's 100%
  {
    uint8_t *a, *b;
    size_t n = 1ull << 30;
    CK(cudaMalloc(&a, n));
    CK(cudaMalloc(&b, n));
    std::vector<float> t;
    for (int r = 0; r < 6; ++r) {
      CK(cudaEventRecord(e0, s));
      CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s));
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    std::printf("copy %.0f GB/s\n", 2.0 * n / (t[2] * 1e-3) / 1e9);
    CK(cudaFree(a));
    CK(cudaFree(b));
  }

  const int layers[4][2] = {{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}};
  const int widths[] = {1, 2, 4, 8};
  std::vector<Cfg> cfgs;
  for (int bps : {1, 2, 4})
    for (int th : {256, 512, 1024})
      for (int un : {4, 8, 16})
        for (bool pdl : {false, true})
          if (bps * th <= 2048) cfgs.push_back({bps, th, un, pdl});

  for (int w : widths) {
    double best_sum = 1e30;
    const Cfg* best = nullptr;
    double best_layer[4] = {1e30, 1e30, 1e30, 1e30};
    for (const Cfg& c : cfgs) {
      double sum = 0, lt[4];
      for (int l = 0; l < 4; ++l) {
        const size_t n = layers[l][0], k = layers[l][1];
        size_t bytes = n * k * w / 8 + n * (k / 128) * 2;  // codes + f16 g128 scales
        bytes = (bytes + 255) / 256 * 256;
        const size_t units = bytes / 16;
        int copies = std::max<size_t>(2, (3ull * l2) / bytes + 1);
        if ((size_t)copies * bytes > pool_bytes) copies = pool_bytes / bytes;
        int calls = copies;
        while (calls < 2000) calls += copies;
        lt[l] = graph_us_per_call(s, calls, [&](int i) {
          launch(c, sms, reinterpret_cast<const uint4*>(pool + (i % copies) * bytes), units, out, s);
        });
        sum += lt[l];
        best_layer[l] = std::min(best_layer[l], lt[l]);
      }
      std::printf("w%d bps=%d th=%4d un=%2d pdl=%d  %6.2f %6.2f %6.2f %6.2f  sum %6.2f\n", w,
                  c.blocks_per_sm, c.threads, c.unroll, c.pdl, lt[0], lt[1], lt[2], lt[3], sum);
      if (sum < best_sum) {
        best_sum = sum;
        best = &c;
      }
    }
    double floor = 0;
    for (int l = 0; l < 4; ++l) {
      const size_t n = layers[l][0], k = layers[l][1];
      floor += (n * k * w / 8.0 + n * (k / 128) * 2.0) / 4263e9 * 1e6;
    }
    std::printf("== w%d best sum %.2f us (bps=%d th=%d un=%d pdl=%d); per-layer best %.2f %.2f "
                "%.2f %.2f; floor %.2f\n",
                w, best_sum, best->blocks_per_sm, best->threads, best->unroll, best->pdl,
                best_layer[0], best_layer[1], best_layer[2], best_layer[3], floor);
  }
  return 0;
}
