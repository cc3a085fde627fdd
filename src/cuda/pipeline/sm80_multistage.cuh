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
#include "cuda/ptx/griddepcontrol.cuh"

namespace lowbit::cuda {

// A stage's loads come in two calls: the model's constants, load_const(slot) (weights,
// scales, zero points: never written by the kernel before this one in the stream), and
// everything else, load_act(slot) (activations), each called once per stage in order. For a
// programmatic dependent launch (PDL, sm_90; griddepcontrol compiles to nothing before) the
// constants of the first STAGES - 1 stages are requested before griddepcontrol.wait, so they
// stream while the previous kernel finishes; the activations after it. Group accounting:
// the prologue's first commit group holds the constants of stages 0..STAGES-2 and the
// activations of stage 0, group s (s >= 1) the activations of stage s, so "groups 0..it
// complete" still means "stage it has landed". The caller writes nothing before the wait
// (its outputs come after the mainloop). Ends with every copy landed and a barrier, so the
// caller may reuse the pipeline's shared memory (e.g. for the epilogue).
template <int STAGES, class LoadConst, class LoadAct, class Compute>
LOWBIT_DEVICE void multistage_mainloop_pdl(int iters, LoadConst&& load_const, LoadAct&& load_act, Compute&& compute) {
  static_assert(STAGES >= 2, "a pipeline needs at least two stages");
#pragma unroll 1
  for (int s = 0; s < STAGES - 1; ++s)
    if (s < iters) load_const(s);
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();
#pragma unroll 1
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < iters) load_act(s);
    ptx::cp_async_commit();
  }
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
    ptx::cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = it + STAGES - 1;
    if (next < iters) {
      load_const(next % STAGES);
      load_act(next % STAGES);
    }
    ptx::cp_async_commit();
    compute(it % STAGES);
  }
  ptx::cp_async_wait<0>();
  __syncthreads();
}

}  // namespace lowbit::cuda
