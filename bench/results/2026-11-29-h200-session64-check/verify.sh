#!/usr/bin/env bash
# Session 64, after the device check of 29edc8d: the tree of afe8637 (select.cpp: the W8 m = 5..7
# rule skips sm80 plans of t16 in one split) built fresh; the selection tests under memcheck, and
# the default beside both families pinned on 10240 x 8192 and 8192 x 8192 at m = 5..8.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
STEPS=build OUT=$OUT bash tools/device-check.sh > /dev/null || { tail -30 "$OUT/build.log"; exit 1; }
rm -f "$OUT/report.md" "$OUT/steps.log" "$OUT/logs.tar.gz"
T=build-device/tests/lowbit_gpu_tests
LOWBIT_TEST_SMALL=1 compute-sanitizer --tool memcheck $T \
  --gtest_filter='smxx_gemv.public_api_selects_gemv:sm90_mixed_gemm.public_api_selection:sm80_mixed_gemm.plan_follows_measurements' \
  > "$OUT/verify-tests.txt" 2>&1; echo "tests rc=$?" >> "$OUT/verify-tests.txt"
L=build-device/lowbit
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 5,6,7,8 --kernels '^(w8_f16|w8_bf16|w8g128_f16)$')
{
for r in 1 2; do
  $L bench "${b[@]}" --shapes 10240x8192,8192x8192 | sed "s/^/default-$r /"
  LOWBIT_CUDA_FAMILIES=smxx_gemv $L bench "${b[@]}" --shapes 10240x8192 | sed "s/^/gemv-$r /"
  LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm $L bench "${b[@]}" --shapes 10240x8192 | sed "s/^/sm80-$r /"
done
} | grep -E '^[a-z0-9-]+ w8(g128)?_b?f16 +n' | awk '{print $1, $2, $3, $4, $7, $NF}' | sort -k2,2 -k3,3 -k4,4n -k1,1 > "$OUT/verify.txt"
tail -3 "$OUT/verify-tests.txt"; cat "$OUT/verify.txt"
