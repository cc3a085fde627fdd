#!/usr/bin/env bash
# Session 68, fourth device call: act-order on sm90_mixed_gemm with PDL. The maps kernel now runs
# before the activations' gather, and the GEMM is a programmatic dependent of the gather: with
# k' = k it reads its parameter maps and requests weights before griddepcontrol.wait as for plain
# weights; only where k' != k it waits first and reads the maps' copies (act_remapped()).
# Carried in .deps/c4t/c4.tar.xz: lowbit and lowbit_gpu_tests (the working tree, 90a).
# 1. act-order and sm90 tests, graph and selection tests; memcheck and racecheck on both mixed GEMMs'
#    act-order tests;
# 2. act-order W4 g128 f16 Suite 1 at m = 64 / 256 / 1024 / 4096: the default against
#    LOWBIT_MIXED_GEMM_PDL=0 (the same order without PDL), two rounds; the plain W4 g128 f16 once per
#    round (its kernels' only change: one more test of act_maps in the producers);
# 3. act-order Suite 1 CPU-checked at m = 33 / 256 (W4 and W8).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c4
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c4t/c4.tar.xz | tar -C /tmp/c4 -xf - || exit 1
T=/tmp/c4/lowbit_gpu_tests
timeout 240 $T --gtest_filter='sm90_mixed_gemm.*:*act_order*:graph_capture.*:*public_api*' --gtest_brief=1 > "$OUT/tests.txt" 2>&1
rc=$?; echo "rc=$rc" >> "$OUT/tests.txt"; tail -3 "$OUT/tests.txt"
mark tests
{
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 $T --gtest_filter='sm90_mixed_gemm.act_order*:sm80_mixed_gemm.act_order*' --gtest_brief=1
  echo "memcheck rc=$?"
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 99 $T --gtest_filter='sm90_mixed_gemm.act_order*' --gtest_brief=1
  echo "racecheck rc=$?"
} > "$OUT/san.txt" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.txt"
mark sanitizers
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 64,256,1024,4096)
for r in 1 2; do
  timeout 100 /tmp/c4/lowbit bench "${b[@]}" --kernels '^w4g128(act)?_f16$' > "$OUT/runs/pdl-$r.txt" 2>&1
  LOWBIT_MIXED_GEMM_PDL=0 timeout 100 /tmp/c4/lowbit bench "${b[@]}" --kernels '^w4g128act_f16$' > "$OUT/runs/nopdl-$r.txt" 2>&1
done
mark bench
timeout 120 /tmp/c4/lowbit bench --suite suite1 --kernels '^w[48]g128act_f16$' --m 33,256 > "$OUT/act-checked.txt" 2>&1
mark checked
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
