#!/usr/bin/env bash
# Session 67, fifth device call: act-order on the GEMV with the table of packed places written
# after the wait (the perm loads before it), carried in .deps/c12t/c12.tar.xz: lowbit and
# lowbit_gpu_tests (the working tree; the plain kernels' SASS byte-identical to abd78b4's).
# 1. the GEMV's tests, both mixed GEMMs' act-order tests, graph and selection tests; memcheck and
#    racecheck on the GEMV's act-order tests;
# 2. act-order W4 g128 f16 Suite 1 at m = 1 / 2 / 4 / 8 / 16: the default against sm80_mixed_gemm
#    pinned (the old default at m <= 16), two rounds; CPU-checked once at m = 1 / 3 / 8.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c12
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c12t/c12.tar.xz | tar -C /tmp/c12 -xf - || exit 1
T=/tmp/c12/lowbit_gpu_tests
timeout 240 $T --gtest_filter='smxx_gemv.*:*act_order*:graph_capture.*:*public_api*' --gtest_brief=1 > "$OUT/tests.txt" 2>&1
rc=$?; echo "rc=$rc" >> "$OUT/tests.txt"; tail -3 "$OUT/tests.txt"
mark tests
{
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order*' --gtest_brief=1
  echo "memcheck rc=$?"
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order_launches' --gtest_brief=1
  echo "racecheck rc=$?"
  LOWBIT_TEST_SMALL=1 timeout 100 compute-sanitizer --tool synccheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order_launches' --gtest_brief=1
  echo "synccheck rc=$?"
} > "$OUT/san.txt" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.txt"
mark sanitizers
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 1,2,4,8,16 --kernels '^w4g128act_f16$')
for r in 1 2; do
  timeout 60 /tmp/c12/lowbit bench "${b[@]}" > "$OUT/runs/act-new-$r.txt" 2>&1
  LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm timeout 60 /tmp/c12/lowbit bench "${b[@]}" > "$OUT/runs/act-sm80-$r.txt" 2>&1
done
mark bench
timeout 60 /tmp/c12/lowbit bench --suite suite1 --kernels '^w4g128act_f16$' --m 1,3,8 > "$OUT/act-checked.txt" 2>&1
mark checked
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[0-9a-z_]+ +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
