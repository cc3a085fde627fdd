// The cp.async multi-stage pipeline (CUTLASS 2.x "multistage" mainloop; Marlin's fetch /
// wait loop): STAGES shared-memory slots, STAGES - 1 stages in flight while one is computed.
//
//   iteration it:  wait until stage it has landed (at most STAGES - 2 groups pending),
//                  barrier (every thread's copies visible; every thread done with it - 1),
//                  issue the loads of stage it + STAGES - 1 into slot (it - 1) % STAGES,
//                  compute stage it from slot it % STAGES.
//
// The barrier before the issue is what makes the slot reuse safe: slot (it - 1) % STAGES
// was last read by compute(it - 1), which every thread finished before arriving. A commit
// happens every iteration, also when nothing is loaded, so the group count stays uniform
// and wait_group<STAGES - 2> always means "stage it is complete".
#pragma once

#include "cuda/ptx/cp_async.cuh"

namespace lowbit::cuda {

// load(slot) issues the cp.async copies of the next k-iteration into `slot` (iterations
// are loaded in order, once each); compute(slot) consumes the oldest loaded one. Ends with every copy landed and a barrier, so the
// caller may reuse the pipeline's shared memory (e.g. for the epilogue).
template <int STAGES, class Load, class Compute>
LOWBIT_DEVICE void multistage_mainloop(int iters, Load&& load, Compute&& compute) {
  static_assert(STAGES >= 2, "a pipeline needs at least two stages");
#pragma unroll 1
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < iters) load(s);
    ptx::cp_async_commit();
  }
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
    ptx::cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = it + STAGES - 1;
    if (next < iters) load(next % STAGES);
    ptx::cp_async_commit();
    compute(it % STAGES);
  }
  ptx::cp_async_wait<0>();
  __syncthreads();
}

}  // namespace lowbit::cuda
