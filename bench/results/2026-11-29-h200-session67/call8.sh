#!/usr/bin/env bash
# Session 67, eighth device call: the act-order scatter's stores rounded to even offsets and tested
# with their rows (a corrupt index must not fault), carried in .deps/c15t/c15.tar.xz: lowbit,
# lowbit_gpu_tests (the working tree). The GEMV's tests (the new corrupt-index test included),
# memcheck on the act-order and corrupt-index tests, racecheck / synccheck on the act-order tests,
# then act-order W4 g128 f16 Suite 1 at m = 1 / 2 / 4 / 8 once, CPU-checked.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p /tmp/c15
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c15t/c15.tar.xz | tar -C /tmp/c15 -xf - || exit 1
T=/tmp/c15/lowbit_gpu_tests
timeout 200 $T --gtest_filter='smxx_gemv.*:*act_order*:*public_api*:graph_capture.*' --gtest_brief=1 > "$OUT/tests.txt" 2>&1
rc=$?; echo "rc=$rc" >> "$OUT/tests.txt"; tail -3 "$OUT/tests.txt"
mark tests
{
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order*:smxx_gemv.corrupt_act_order*' --gtest_brief=1
  echo "memcheck rc=$?"
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order*' --gtest_brief=1
  echo "racecheck rc=$?"
  timeout 100 compute-sanitizer --tool synccheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order*' --gtest_brief=1
  echo "synccheck rc=$?"
} > "$OUT/san.txt" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.txt"
mark sanitizers
timeout 60 /tmp/c15/lowbit bench --suite suite1 --kernels '^w4g128act_f16$' --m 1,2,4,8 --reps 3 --min-replay-ms 25 > "$OUT/act-checked.txt" 2>&1
mark bench
grep -A3 summary "$OUT/act-checked.txt" | tail -2
cat "$OUT/timing.txt"
