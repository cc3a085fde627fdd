// griddepcontrol (PTX ISA, "Parallel Synchronization and Communication Instructions:
// griddepcontrol", sm_90): programmatic dependent launch (PDL).
//
// A kernel launched with cudaLaunchAttributeProgrammaticStreamSerialization may start while
// the previous kernel of its stream is still running. It must execute griddep_wait() before
// it reads anything that kernel writes (activations, bias) or writes anything that kernel
// reads (the output); the wait returns once the previous grid has completed and its memory
// operations are visible. griddep_launch_dependents() lets the NEXT kernel of the stream
// (when it was launched with the attribute) begin launching; it does not make this kernel's
// writes visible early, so it is safe to issue at any point.
//
// Launched without the attribute (or with no preceding kernel), both are no-ops. Before
// sm_90 the instructions do not exist and the wrappers compile to nothing: the host never
// sets the attribute there.
#pragma once

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

LOWBIT_DEVICE void griddep_wait() {
#if LOWBIT_HAS_SM90
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

LOWBIT_DEVICE void griddep_launch_dependents() {
#if LOWBIT_HAS_SM90
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

}  // namespace lowbit::ptx
