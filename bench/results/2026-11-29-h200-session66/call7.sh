#!/usr/bin/env bash
# Session 66, seventh device call (the sixth was call 5 again after a test fix): the act-order
# gather staged a row per block in shared memory (sm80_mixed_gemm_aux.cu), carried in
# .deps/c7/c7.tar.xz: lowbit, lowbit_gpu_tests (the working tree), lowbit-prev (18632dd).
# 1. the act-order tests of both families (the staged gather and, at k = 24704, the element-per-
#    thread one) and memcheck / racecheck on them;
# 2. act-order W4 g128 f16 Suite 1, 18632dd against the new gather (default selection: sm90 from
#    m = 33), and sm80_mixed_gemm pinned, two rounds; CPU-checked once at m = 256 / 1000.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c7
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c7/c7.tar.xz | tar -C /tmp/c7 -xf - || exit 1
T=/tmp/c7/lowbit_gpu_tests
timeout 120 $T --gtest_filter='*act_order*:graph_capture.*' --gtest_brief=1 > "$OUT/tests.txt" 2>&1
rc=$?; echo "rc=$rc" >> "$OUT/tests.txt"; tail -3 "$OUT/tests.txt"
mark tests
[ $rc -ne 0 ] && { grep -E "FAILED|Failure" "$OUT/tests.txt" | head; exit 1; }
{
  LOWBIT_TEST_SMALL=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 $T --gtest_filter='*act_order*' --gtest_brief=1
  echo "memcheck rc=$?"
  LOWBIT_TEST_SMALL=1 timeout 60 compute-sanitizer --tool racecheck --error-exitcode 99 $T --gtest_filter='sm80_mixed_gemm.act_order*' --gtest_brief=1
  echo "racecheck rc=$?"
} > "$OUT/san.txt" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.txt"
mark sanitizers
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --kernels '^w4g128act_f16$' --m 16,64,256,4096)
for r in 1 2; do
  timeout 60 /tmp/c7/lowbit-prev bench "${b[@]}" > "$OUT/runs/act-prev-$r.txt" 2>&1
  timeout 60 /tmp/c7/lowbit bench "${b[@]}" > "$OUT/runs/act-new-$r.txt" 2>&1
  LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm timeout 60 /tmp/c7/lowbit bench "${b[@]}" > "$OUT/runs/act-sm80-$r.txt" 2>&1
done
mark bench
timeout 90 /tmp/c7/lowbit bench --suite suite1 --kernels '^w4g128act_f16$' --m 256,1000 > "$OUT/act-checked.txt" 2>&1
mark checked
for f in "$OUT"/runs/*.txt; do grep -h -E '^w4g128act_f16 +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
