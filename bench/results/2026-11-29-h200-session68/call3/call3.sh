#!/usr/bin/env bash
# Session 68, third device call: the gather in rounds of R rows where the copy of every row would
# change the launch (R = the largest whose launch is the table's, at least 2; so the gather at every
# m), and act-order clusters on the GEMV only with >= 12 warps at m <= 5 and n < 7168 (select.cpp).
# Carried in .deps/c3t/c3.tar.xz: lowbit and lowbit_gpu_tests (the working tree, 90a).
# 1. the GEMV's tests, both mixed GEMMs' act-order tests, graph and selection tests; memcheck on the
#    GEMV's act-order and corrupt-index tests, racecheck / synccheck on the act-order launches;
# 2. act-order W4 and W8 g128 f16 Suite 1 at m = 1..8: the default against the table's scatter
#    everywhere (LOWBIT_GEMV_ACT_GATHER=0) and sm80_mixed_gemm pinned, two rounds; the plain W4 g128
#    f16 at m = 1 / 2 (kernels unchanged) for reference;
# 3. the wide layers with the default selection, one round;
# 4. act-order Suite 1 CPU-checked at m = 1..8 (W4 and W8).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c3
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c3t/c3.tar.xz | tar -C /tmp/c3 -xf - || exit 1
T=/tmp/c3/lowbit_gpu_tests
timeout 240 $T --gtest_filter='smxx_gemv.*:*act_order*:graph_capture.*:*public_api*' --gtest_brief=1 > "$OUT/tests.txt" 2>&1
rc=$?; echo "rc=$rc" >> "$OUT/tests.txt"; tail -3 "$OUT/tests.txt"
mark tests
{
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order*:smxx_gemv.corrupt_act_order*' --gtest_brief=1
  echo "memcheck rc=$?"
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order_launches' --gtest_brief=1
  echo "racecheck rc=$?"
  LOWBIT_TEST_SMALL=1 timeout 100 compute-sanitizer --tool synccheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order_launches' --gtest_brief=1
  echo "synccheck rc=$?"
} > "$OUT/san.txt" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.txt"
mark sanitizers
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 1,2,3,4,5,6,7,8 --kernels '^w[48]g128act_f16$')
for r in 1 2; do
  timeout 100 /tmp/c3/lowbit bench "${b[@]}" > "$OUT/runs/new-$r.txt" 2>&1
  LOWBIT_GEMV_ACT_GATHER=0 timeout 100 /tmp/c3/lowbit bench "${b[@]}" > "$OUT/runs/scatter-$r.txt" 2>&1
  LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm timeout 100 /tmp/c3/lowbit bench "${b[@]}" > "$OUT/runs/sm80-$r.txt" 2>&1
  timeout 60 /tmp/c3/lowbit bench --suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 1,2 --kernels '^w4g128_f16$' > "$OUT/runs/plain-$r.txt" 2>&1
done
mark bench-suite1
timeout 90 /tmp/c3/lowbit bench --shapes 8192x28672,4096x14336,5120x13824 --m 1,2 --no-check --reps 3 --min-replay-ms 25 --kernels '^w[48]g128act_f16$' > "$OUT/runs/wide-new-1.txt" 2>&1
mark bench-wide
timeout 150 /tmp/c3/lowbit bench --suite suite1 --kernels '^w[48]g128act_f16$' --m 1,2,3,4,5,6,7,8 > "$OUT/act-checked.txt" 2>&1
mark checked
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
