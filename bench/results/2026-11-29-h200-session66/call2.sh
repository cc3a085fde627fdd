#!/usr/bin/env bash
# Session 66, second device call, on the working tree's build (90a, carried in .deps/c2/c2.tar.xz:
# lowbit, lowbit_gpu_tests): the stream-K tail rule extended to the 128-token tile (sm90 v24).
# 1. sm90_mixed_gemm and graph tests (with the new bf16 x 8-bit halves tail case); memcheck and
#    racecheck on the tail tests;
# 2. the rule's default against LOWBIT_SM90_MIXED_SK=0, two rounds, m = 80 / 128, on the layers it
#    takes (19712 / 22528 / 36864 x 4096) and controls (25344 x 4096, Suite 1), for the variants
#    call 1 did not measure (bf16, asymmetric, bf16 x 8-bit on c128t128 by halves) and W4 / W8 f16.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c2
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c2/c2.tar.xz | tar -C /tmp/c2 -xf - || exit 1
mark unpacked
T=/tmp/c2/lowbit_gpu_tests
$T --gtest_filter='sm90_mixed_gemm.*:graph_capture.*:smxx_gemv.public_api*' --gtest_brief=1 > "$OUT/tests.log" 2>&1
echo "rc=$?" >> "$OUT/tests.log"; tail -3 "$OUT/tests.log"
mark tests
{
  LOWBIT_TEST_SMALL=1 compute-sanitizer --tool memcheck --error-exitcode 99 $T --gtest_filter='sm90_mixed_gemm.stream_k*' --gtest_brief=1
  echo "memcheck rc=$?"
  LOWBIT_TEST_SMALL=1 compute-sanitizer --tool racecheck --error-exitcode 99 $T --gtest_filter='sm90_mixed_gemm.stream_k_tail' --gtest_brief=1
  echo "racecheck rc=$?"
} > "$OUT/san.log" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.log"
mark sanitizers
b=(--no-check --reps 3 --min-replay-ms 25 --kernels '^(w4g128_f16|w8_f16|w4g128_bf16|w8_bf16|w4g128asym_f16)$' --m 80,128)
for r in 1 2; do
  for sk in 0 d; do
    env=(); [ $sk = 0 ] && env=(LOWBIT_SM90_MIXED_SK=0)
    env "${env[@]}" /tmp/c2/lowbit bench --suite suite1 "${b[@]}" --shapes 19712x4096,22528x4096,36864x4096,25344x4096 > "$OUT/runs/w-sk$sk-$r.txt" 2>&1
    env "${env[@]}" /tmp/c2/lowbit bench --suite suite1 "${b[@]}" > "$OUT/runs/s1-sk$sk-$r.txt" 2>&1
  done
done
mark rule
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[48](g128)?(asym)?_b?f16 +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
