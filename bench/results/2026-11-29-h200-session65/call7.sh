#!/usr/bin/env bash
# Session 65, seventh device call: the device check of the stream-K tail commit, on binaries built
# on the development machine from that commit and carried in .deps/sk2/sk2.tar.xz (lowbit,
# tests/lowbit_gpu_tests; lowbit-base = f681ce0's tree, the kernels before the tail).
# 1. the sm90 mixed GEMM and graph-capture tests; memcheck and racecheck on the tail's tests (small);
# 2. A/B, base against the commit, two rounds: Suite 1 at m = 64 and n x 4096 layers at m = 64
#    (W4 g128 f16, W8 per-channel f16): the plain kernels must not have moved, the tail's layers gain;
# 3. tools/device-check.sh on the carried build (PREBUILT, STEPS=bench): the full lowbit bench with
#    CPU checks (last, under a timeout: the session's device time is nearly spent).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/skb
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
xz -dc .deps/sk2/sk2.tar.xz | tar -C /tmp/skb -xf - || exit 1
mark unpacked
T=/tmp/skb/tests/lowbit_gpu_tests
$T --gtest_filter='sm90_mixed_gemm.*:graph_capture.*' --gtest_brief=1 > "$OUT/tests.log" 2>&1
echo "rc=$?" >> "$OUT/tests.log"; tail -3 "$OUT/tests.log"
mark tests
{
  LOWBIT_TEST_SMALL=1 compute-sanitizer --tool memcheck --error-exitcode 99 $T \
    --gtest_filter='sm90_mixed_gemm.stream_k*:sm90_mixed_gemm.every_config_and_split:sm90_mixed_gemm.deterministic*:sm90_mixed_gemm.cuda_graph_capture:sm90_mixed_gemm.two_streams*' --gtest_brief=1
  echo "memcheck rc=$?"
  LOWBIT_TEST_SMALL=1 compute-sanitizer --tool racecheck --error-exitcode 99 $T \
    --gtest_filter='sm90_mixed_gemm.stream_k_tail:sm90_mixed_gemm.every_config_and_split' --gtest_brief=1
  echo "racecheck rc=$?"
} > "$OUT/san.log" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.log"
mark sanitizers
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --kernels '^(w4g128_f16|w8_f16)$' --m 64)
for r in 1 2; do
  for arm in base new; do
    bin=/tmp/skb/lowbit; [ $arm = base ] && bin=/tmp/skb/lowbit-base
    $bin bench "${b[@]}" > "$OUT/runs/s1-$arm-$r.txt" 2>&1
    $bin bench "${b[@]}" --shapes 16896x4096,19712x4096,22528x4096,25344x4096,28672x4096 > "$OUT/runs/w-$arm-$r.txt" 2>&1
  done
done
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[48](g128)?_f16 +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/ab-runs.tgz" runs && rm -rf "$OUT/runs"
mark ab
PREBUILT=/tmp/skb STEPS="bench" OUT=$OUT timeout 200 bash tools/device-check.sh >> "$OUT/timing.txt" 2>&1
echo "device-check rc=$?" >> "$OUT/timing.txt"
mark check
grep -E "overall" "$OUT/report.md"
cat "$OUT/timing.txt"
