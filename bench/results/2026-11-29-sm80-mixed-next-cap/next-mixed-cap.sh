#!/usr/bin/env bash
# Prepared in session 60, not run (no device time left). One device call (~250 s on an H200),
# from the repository root carrying .deps:
#   bash bench/results/2026-11-29-sm80-mixed-next-cap/next-mixed-cap.sh
# Question: does sm80_mixed_gemm at m = 9..32 lose time to three or more CTAs per SM the way
# sm89_fp8_gemm's t8 did on long k (fp8 down at m = 1: 18.0 us with three per SM, 15.3 with
# two; ../2026-11-29-h200-sm89-fp8-gate-up/)? Suite 1's down at m = 16 (t16 s4, 256 CTAs) runs
# at 44% of the copy bandwidth, the same 256-CTA grid as fp8's down. The patch adds the knob
# LOWBIT_MIXED_GEMM_CAP=<n> (every launch padded to at most n CTAs per SM; kernel names end in
# _c<n> where the pad applies); 0 = no cap (the default path, unchanged).
set -uo pipefail
D=bench/results/2026-11-29-sm80-mixed-next-cap
git apply $D/next-mixed-cap.patch 2>/dev/null || patch -p1 < $D/next-mixed-cap.patch > /dev/null || { echo "patch failed"; exit 1; }
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
  -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 && cmake --build build-device -j16 >> "$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
# Occupancy of the plans in question (the sm80 plan test prints the plans; CTAs per SM from the
# tests' own output where printed).
build-device/tests/lowbit_gpu_tests --gtest_filter='sm80_mixed_gemm.*:graph_capture.*' --gtest_brief=1 > "$OUT/tests.log" 2>&1
echo "tests rc $?"; grep -E "^\[  (PASSED|FAILED)" "$OUT/tests.log"
export LOWBIT=build-device/lowbit
OUT="$OUT/ab" bash tools/dev/env-ab.sh LOWBIT_MIXED_GEMM_CAP "0 1 2 3" 2 --suite suite1 --m 12,16,32 \
  --kernels '^(w4g128_f16|w8_f16)$' --no-check > "$OUT/ab-summary.txt" 2>&1
cat "$OUT/ab-summary.txt" | grep -E "^==|^w"
for f in "$OUT"/ab/*.txt; do echo "== $f"; grep -E "^w(4g128|8)_f16 " "$f" | awk '{print $1, $2, $3, $6, $NF}'; done
LOWBIT_MIXED_GEMM_CAP=2 build-device/lowbit bench --suite suite1 --m 12,16,32 --kernels '^(w4g128_f16|w4g128_bf16|w8_f16)$' \
  > "$OUT/check-cap2.txt" 2>&1; echo "CPU-checked run with cap 2: rc $?"; grep -ciE " fail" "$OUT/check-cap2.txt"
cd "$OUT" && tar czf logs.tgz build.log tests.log ab check-cap2.txt && rm -rf build.log tests.log ab check-cap2.txt
