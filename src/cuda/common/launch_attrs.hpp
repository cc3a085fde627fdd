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

}  // namespace lowbit::cuda
