#!/usr/bin/env bash
# Session 66, fifth device call (calls 3-4 were the device check of aa54825): act-order weights on
# sm90_mixed_gemm (the activations gathered, the tensor maps re-extented to k' on the device), on
# binaries built on the development machine (90a) and carried in .deps/c5/c5.tar.xz: new/lowbit,
# new/tests/lowbit_gpu_tests (the working tree), lowbit-old (aa54825).
# 1. sm90 mixed, sm80 act-order and graph tests; memcheck and racecheck on the act-order test;
# 2. A/B of the plain kernels, aa54825 against the new build (the consumer code was rescheduled by
#    the k' plumbing): Suite 1 W4 g128 f16 / W8 per-channel f16 at m = 64 / 256 / 1024 / 4096;
# 3. act-order W4 g128 f16 on Suite 1, the new default (sm90 from m = 33) against sm80_mixed_gemm
#    pinned, CPU-checked once at m = 256;
# 4. tools/device-check.sh on the new build (PREBUILT, STEPS=bench): the full bench, CPU-checked.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c5
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c5/c5.tar.xz | tar -C /tmp/c5 -xf - || exit 1
mark unpacked
T=/tmp/c5/new/tests/lowbit_gpu_tests
timeout 240 $T --gtest_filter='sm90_mixed_gemm.*:sm80_mixed_gemm.act_order*:graph_capture.*' --gtest_brief=1 > "$OUT/tests.log" 2>&1
rc=$?; echo "rc=$rc" >> "$OUT/tests.log"; tail -4 "$OUT/tests.log"
mark tests
if [ $rc -ne 0 ]; then grep -E "FAILED|Failure|error" "$OUT/tests.log" | head -20; exit 1; fi
{
  LOWBIT_TEST_SMALL=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 $T --gtest_filter='sm90_mixed_gemm.act_order*:sm90_mixed_gemm.cuda_graph_capture' --gtest_brief=1
  echo "memcheck rc=$?"
  LOWBIT_TEST_SMALL=1 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 99 $T --gtest_filter='sm90_mixed_gemm.act_order*' --gtest_brief=1
  echo "racecheck rc=$?"
} > "$OUT/san.log" 2>&1
grep -E "SUMMARY|rc=" "$OUT/san.log"
mark sanitizers
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25)
for r in 1 2; do
  for arm in old new; do
    bin=/tmp/c5/lowbit-old; [ $arm = new ] && bin=/tmp/c5/new/lowbit
    timeout 120 $bin bench "${b[@]}" --kernels '^(w4g128_f16|w8_f16)$' --m 64,256,1024 > "$OUT/runs/ab-$arm-$r.txt" 2>&1
  done
done
for arm in old new; do
  bin=/tmp/c5/lowbit-old; [ $arm = new ] && bin=/tmp/c5/new/lowbit
  timeout 120 $bin bench "${b[@]}" --kernels '^(w4g128_f16|w8_f16)$' --m 4096 > "$OUT/runs/ab4096-$arm-1.txt" 2>&1
done
mark ab
for r in 1 2; do
  timeout 120 /tmp/c5/new/lowbit bench "${b[@]}" --kernels '^(w4g128act_f16|w4g128_f16)$' --m 16,64,256,1024,4096 > "$OUT/runs/act-sm90-$r.txt" 2>&1
  LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm timeout 120 /tmp/c5/new/lowbit bench "${b[@]}" --kernels '^(w4g128act_f16|w4g128_f16)$' --m 16,64,256,1024,4096 > "$OUT/runs/act-sm80-$r.txt" 2>&1
done
timeout 120 /tmp/c5/new/lowbit bench --suite suite1 --kernels '^w4g128act_f16$' --m 256,1000 > "$OUT/act-checked.txt" 2>&1
mark act
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[48](g128)?(act|asym)?_b?f16 +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
PREBUILT=/tmp/c5/new STEPS="bench" OUT=$OUT LOWBIT_COMMIT=${LOWBIT_COMMIT:-unknown} timeout 260 bash tools/device-check.sh >> "$OUT/timing.txt" 2>&1
echo "device-check rc=$?" >> "$OUT/timing.txt"
mark check
grep -E "overall" "$OUT/report.md"
cat "$OUT/timing.txt"
