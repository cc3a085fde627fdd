// Internal: a GPU made current for a scope, the caller's device given back after.
//
// Every family object belongs to one GPU (GpuSpec::device) and may be built or run from a
// thread whose current device is another: it switches to its own for the runtime calls that
// depend on it (occupancy queries, shared-memory limits, launches) and switches back.
//
//   DeviceGuard guard(device_);                      // one cudaGetDevice() when already right
//   if (!guard.ok()) return guard.status();          // the switch failed (run() paths)
//   return guard.finish(enqueue(...));               // back now; the first failure reported
//
//   DeviceGuard guard(gpu.device);                   // construction paths
//   guard.check();                                   // throws lowbit::Error if the switch failed
//   ...
//   throw_if_error(guard.finish(s));
//
// finish() gives the device back and reports a failed cudaSetDevice() like any other call. If
// the scope is left without it (an exception thrown in between), the destructor gives the
// device back, ignoring the result (a destructor cannot report it). Before this guard each
// site restored by hand after its calls, and a throwing check between the two left the
// caller on the family's device.
//
// Host-only.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda/common/check.hpp"
#include "lowbit/status.hpp"

namespace lowbit::cuda {

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) : status_(enter(device)) {}
  ~DeviceGuard() {
    if (switched_) (void)cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // Throws lowbit::Error with the reason if the switch failed.
  void check() const { throw_if_error(status_); }

  // Gives the caller's device back now (once). Returns `s` if it failed, else the status of
  // the restoring cudaSetDevice().
  Status finish(Status s) {
    if (switched_) {
      switched_ = false;
      const cudaError_t e = cudaSetDevice(previous_);
      if (e != cudaSuccess && s.ok())
        return check_impl::cuda_status(e, __FILE__, __LINE__, "cudaSetDevice(previous)");
    }
    return s;
  }

 private:
  // Initializes status_ (declared after previous_ and switched_, which it sets); a
  // constructor body assigning status_ drew nvcc's warning 2810 (the discarded Status& of the
  // assignment, Status being [[nodiscard]]).
  Status enter(int device) {
    cudaError_t e = cudaGetDevice(&previous_);
    if (e != cudaSuccess) return check_impl::cuda_status(e, __FILE__, __LINE__, "cudaGetDevice(&previous)");
    if (previous_ == device) return Status::Ok();
    e = cudaSetDevice(device);
    if (e != cudaSuccess) return check_impl::cuda_status(e, __FILE__, __LINE__, "cudaSetDevice(device)");
    switched_ = true;
    return Status::Ok();
  }

  int previous_ = 0;
  bool switched_ = false;
  Status status_;
};

}  // namespace lowbit::cuda
