#!/usr/bin/env bash
# Session 67, second device call: act-order weights on the decode GEMV, now staged by a block-wide
# scatter (coalesced reads of x, stores at the packed column's place from a table built before
# griddepcontrol.wait) instead of call 1's per-warp gather, carried in .deps/c9t/c9.tar.xz: lowbit and
# lowbit_gpu_tests (the working tree), lowbit-old (31e0878's code: abd78b4 is comment-only).
# 1. the GEMV's tests (act-order ones included), both mixed GEMMs' act-order tests, the graph and
#    selection tests; memcheck / racecheck on the GEMV's act-order tests;
# 2. Suite 1 at m = 1 / 2 / 4 / 8: act-order W4 g128 f16 (new default = the GEMV, against the old
#    default = sm80_mixed_gemm), and the plain W4 g128 f16 / bf16 and W8 per-channel f16 (old
#    against new: the staging loop was restructured), two rounds; CPU-checked once.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c9
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c9t/c9.tar.xz | tar -C /tmp/c9 -xf - || exit 1
T=/tmp/c9/lowbit_gpu_tests
timeout 240 $T --gtest_filter='smxx_gemv.*:*act_order*:graph_capture.*:*public_api*' --gtest_brief=1 > "$OUT/tests.txt" 2>&1
rc=$?; echo "rc=$rc" >> "$OUT/tests.txt"; tail -3 "$OUT/tests.txt"
mark tests
{
  LOWBIT_TEST_SMALL=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order*' --gtest_brief=1
  echo "memcheck rc=$?"
  LOWBIT_TEST_SMALL=1 timeout 80 compute-sanitizer --tool racecheck --error-exitcode 99 $T --gtest_filter='smxx_gemv.tiled_layout_act_order_launches' --gtest_brief=1
  echo "racecheck rc=$?"
} > "$OUT/san.txt" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.txt"
mark sanitizers
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 1,2,4,8)
for r in 1 2; do
  for arm in old new; do
    bin=/tmp/c9/lowbit; [ $arm = old ] && bin=/tmp/c9/lowbit-old
    timeout 60 $bin bench "${b[@]}" --kernels '^w4g128act_f16$' > "$OUT/runs/act-$arm-$r.txt" 2>&1
    timeout 90 $bin bench "${b[@]}" --kernels '^(w4g128_f16|w4g128_bf16|w8_f16)$' > "$OUT/runs/plain-$arm-$r.txt" 2>&1
  done
done
mark bench
timeout 60 /tmp/c9/lowbit bench --suite suite1 --kernels '^w4g128act_f16$' --m 1,3,8 > "$OUT/act-checked.txt" 2>&1
mark checked
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[0-9a-z_]+ +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
