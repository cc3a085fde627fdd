#!/usr/bin/env bash
# Session 67, seventh device call: act-order weights on one block of 16 warps per SM at every m
# (the launch rule from call 6), carried in .deps/c14t/c14.tar.xz: lowbit, lowbit_gpu_tests (the
# working tree: 8800b24 plus that rule). The GEMV's tests (memcheck on the act-order ones), then
# act-order W4 g128 f16 Suite 1 at m = 1 / 2 / 4 / 8, two rounds, and CPU-checked once at m = 1 / 2.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c14
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c14t/c14.tar.xz | tar -C /tmp/c14 -xf - || exit 1
T=/tmp/c14/lowbit_gpu_tests
timeout 200 $T --gtest_filter='smxx_gemv.*:*act_order*:*public_api*' --gtest_brief=1 > "$OUT/tests.txt" 2>&1
rc=$?; echo "rc=$rc" >> "$OUT/tests.txt"; tail -3 "$OUT/tests.txt"
mark tests
{
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order*' --gtest_brief=1
  echo "memcheck rc=$?"
} > "$OUT/san.txt" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.txt"
mark sanitizers
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 1,2,4,8 --kernels '^w4g128act_f16$')
for r in 1 2; do
  timeout 60 /tmp/c14/lowbit bench "${b[@]}" > "$OUT/runs/act-new-$r.txt" 2>&1
done
mark bench
timeout 60 /tmp/c14/lowbit bench --suite suite1 --kernels '^w4g128act_f16$' --m 1,2 > "$OUT/act-checked.txt" 2>&1
mark checked
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[0-9a-z_]+ +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
