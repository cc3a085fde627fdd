#!/usr/bin/env bash
# Session 66, first device call, on binaries built on the development machine (90a) and carried
# in .deps/ab/ab.tar.xz: lowbit-old (HEAD 956cf2e), lowbit-new and lowbit_gpu_tests-new (the
# working tree: sm90_mixed_gemm's walk as one helper, for_each_unit(); one plane-sum kernel,
# reduce_planes.cuh, for sm80_mixed_gemm's splits and sm90_mixed_gemm's stream-K tail).
# 1. the mixed GEMM and graph tests on the new build; memcheck / racecheck on the split and tail tests;
# 2. A/B old against new, two rounds: Suite 1 at m = 64 / 128 and n x 4096 layers with a
#    stream-K tail at m = 64 (W4 g128 f16, W8 per-channel f16): must not move;
# 3. the stream-K tail on the 128-token tile (c128t128k128), not measured before: the new build,
#    LOWBIT_SM90_MIXED_SK=0 / 1, two rounds, n x 4096 at m = 96 / 128 and Suite 1.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/ab
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/ab/ab.tar.xz | tar -C /tmp/ab -xf - || exit 1
mark unpacked
T=/tmp/ab/lowbit_gpu_tests-new
$T --gtest_filter='sm90_mixed_gemm.*:sm80_mixed_gemm.*:graph_capture.*' --gtest_brief=1 > "$OUT/tests.log" 2>&1
echo "rc=$?" >> "$OUT/tests.log"; tail -3 "$OUT/tests.log"
mark tests
{
  LOWBIT_TEST_SMALL=1 compute-sanitizer --tool memcheck --error-exitcode 99 $T \
    --gtest_filter='sm90_mixed_gemm.stream_k*:sm90_mixed_gemm.every_config_and_split:sm80_mixed_gemm.every_config_and_split_mode:sm90_mixed_gemm.cuda_graph_capture:sm90_mixed_gemm.two_streams*' --gtest_brief=1
  echo "memcheck rc=$?"
  LOWBIT_TEST_SMALL=1 compute-sanitizer --tool racecheck --error-exitcode 99 $T \
    --gtest_filter='sm90_mixed_gemm.stream_k_tail:sm90_mixed_gemm.every_config_and_split' --gtest_brief=1
  echo "racecheck rc=$?"
} > "$OUT/san.log" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.log"
mark sanitizers
b=(--no-check --reps 3 --min-replay-ms 25 --kernels '^(w4g128_f16|w8_f16)$')
for r in 1 2; do
  for arm in old new; do
    bin=/tmp/ab/lowbit-$arm
    $bin bench --suite suite1 --m 64,128 "${b[@]}" > "$OUT/runs/s1-$arm-$r.txt" 2>&1
    $bin bench --suite suite1 --m 64 "${b[@]}" --shapes 19712x4096,22528x4096 > "$OUT/runs/w-$arm-$r.txt" 2>&1
  done
done
mark ab
for r in 1 2; do
  for sk in 0 1; do
    LOWBIT_SM90_MIXED_SK=$sk /tmp/ab/lowbit-new bench --suite suite1 --m 96,128 "${b[@]}" > "$OUT/runs/t128s1-sk$sk-$r.txt" 2>&1
    LOWBIT_SM90_MIXED_SK=$sk /tmp/ab/lowbit-new bench --suite suite1 --m 96,128 "${b[@]}" \
      --shapes 6144x4096,14336x4096,16896x4096,19712x4096,22528x4096,25344x4096,28672x4096,36864x4096,19712x8192 \
      > "$OUT/runs/t128w-sk$sk-$r.txt" 2>&1
  done
done
mark t128
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[48](g128)?_f16 +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
