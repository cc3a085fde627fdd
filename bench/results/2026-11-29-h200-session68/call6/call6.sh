#!/usr/bin/env bash
# Session 68, sixth device call: the committed form of call 5's "new" (map_of() reads the maps'
# copies only where k' != k; the producers' griddepcontrol.wait before them, a no-op without PDL,
# removed). Carried in .deps/c6t/c6.tar.xz: lowbit and lowbit_gpu_tests (the working tree, 90a,
# stripped).
# 1. sm90 and act-order tests, graph and selection tests; memcheck on both mixed GEMMs' act-order
#    tests, racecheck on sm90's;
# 2. W4 g128 f16 act-order and plain Suite 1 at m = 64 / 256, one round; act-order CPU-checked at
#    m = 33 / 256 (W4 and W8).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c6
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c6t/c6.tar.xz | tar -C /tmp/c6 -xf - || exit 1
T=/tmp/c6/lowbit_gpu_tests
timeout 200 $T --gtest_filter='sm90_mixed_gemm.*:*act_order*:graph_capture.*:*public_api*' --gtest_brief=1 > "$OUT/tests.txt" 2>&1
rc=$?; echo "rc=$rc" >> "$OUT/tests.txt"; tail -3 "$OUT/tests.txt"
mark tests
{
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 $T --gtest_filter='sm90_mixed_gemm.act_order*:sm80_mixed_gemm.act_order*' --gtest_brief=1
  echo "memcheck rc=$?"
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 99 $T --gtest_filter='sm90_mixed_gemm.act_order*' --gtest_brief=1
  echo "racecheck rc=$?"
} > "$OUT/san.txt" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.txt"
mark sanitizers
timeout 100 /tmp/c6/lowbit bench --suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 64,256 --kernels '^w4g128(act)?_f16$' > "$OUT/runs/new-1.txt" 2>&1
mark bench
timeout 120 /tmp/c6/lowbit bench --suite suite1 --kernels '^w[48]g128act_f16$' --m 33,256 > "$OUT/act-checked.txt" 2>&1
mark checked
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
