#!/usr/bin/env bash
# Session 68, first device call: act-order on the GEMV with the lanes' gather from the block's copy
# of the activation rows at m <= 2 (instead of the table of places and the block's scatter), and the
# fewer-warps / cluster search of the launch extended to act-order at m <= 2. Carried in
# .deps/c1t/c1.tar.xz: lowbit and lowbit_gpu_tests (the working tree, 90a).
# 1. the GEMV's tests, both mixed GEMMs' act-order tests, graph and selection tests; memcheck on the
#    GEMV's act-order and corrupt-index tests, racecheck / synccheck on the act-order launches;
# 2. act-order W4 g128 f16 Suite 1 at m = 1 / 2 / 4 / 8: gather (default at m <= 2, forced at 4 / 8)
#    against the table's scatter (LOWBIT_GEMV_ACT_GATHER=0), two rounds;
# 3. the layers the extended launch search now admits (8192x28672, 4096x14336, 5120x13824; W4 and
#    W8 act-order at m = 1 / 2): the default against sm80_mixed_gemm pinned, two rounds;
# 4. act-order Suite 1 CPU-checked once at m = 1 / 2 / 3 (W4 and W8).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c1
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c1t/c1.tar.xz | tar -C /tmp/c1 -xf - || exit 1
T=/tmp/c1/lowbit_gpu_tests
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
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --kernels '^w4g128act_f16$')
for r in 1 2; do
  timeout 60 /tmp/c1/lowbit bench "${b[@]}" --m 1,2 > "$OUT/runs/gather-$r.txt" 2>&1
  LOWBIT_GEMV_ACT_GATHER=0 timeout 60 /tmp/c1/lowbit bench "${b[@]}" --m 1,2,4,8 > "$OUT/runs/scatter-$r.txt" 2>&1
  LOWBIT_GEMV_ACT_GATHER=1 timeout 60 /tmp/c1/lowbit bench "${b[@]}" --m 4,8 > "$OUT/runs/gather48-$r.txt" 2>&1
done
mark bench-gather
s=(--shapes 8192x28672,4096x14336,5120x13824 --m 1,2 --no-check --reps 3 --min-replay-ms 25 --kernels '^w[48]g128act_f16$')
for r in 1 2; do
  timeout 90 /tmp/c1/lowbit bench "${s[@]}" > "$OUT/runs/wide-new-$r.txt" 2>&1
  LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm timeout 90 /tmp/c1/lowbit bench "${s[@]}" > "$OUT/runs/wide-sm80-$r.txt" 2>&1
done
mark bench-wide
timeout 120 /tmp/c1/lowbit bench --suite suite1 --kernels '^w[48]g128act_f16$' --m 1,2,3 > "$OUT/act-checked.txt" 2>&1
mark checked
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
