// Launch attributes for cudaLaunchKernelEx, shared by the families' launchers. Host code.
#pragma once

#include <cuda_runtime_api.h>

namespace lowbit::cuda {

// Programmatic dependent launch (sm_90): the kernel may start while the previous kernel of
// its stream finishes; it orders itself with griddepcontrol (ptx/griddepcontrol.cuh).
inline cudaLaunchAttribute pdl_launch_attr() {
  cudaLaunchAttribute a = {};
  a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a.val.programmaticStreamSerializationAllowed = 1;
  return a;
}

// Thread-block clusters of x * y * z blocks (sm_90).
inline cudaLaunchAttribute cluster_launch_attr(unsigned x, unsigned y, unsigned z) {
  cudaLaunchAttribute a = {};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = x;
  a.val.clusterDim.y = y;
  a.val.clusterDim.z = z;
  return a;
}

// How many clusters of shape `cluster` of `kernel` (`threads` per CTA, `smem` bytes of dynamic
// shared memory) the GPU keeps resident at once (sm_90). A cluster must fit one GPC, so this
// can be less than SMs x CTAs per SM / cluster size: the split-K heuristics check their
// clusters against it (heuristics/gpu_spec.hpp, split_clusters_fit). Call after the kernel's
// shared-memory limit has been raised.
inline cudaError_t resident_clusters(const void* kernel, unsigned threads, size_t smem, dim3 cluster, int* clusters) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = cluster;
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1] = {cluster_launch_attr(cluster.x, cluster.y, cluster.z)};
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaOccupancyMaxActiveClusters(clusters, kernel, &cfg);
}

}  // namespace lowbit::cuda
