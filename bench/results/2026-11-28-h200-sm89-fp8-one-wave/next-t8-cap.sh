#!/usr/bin/env bash
# Prepared in session 58, not run: the t8 CTA-per-SM ceiling (next-t8-cap.patch) against the
# default, on one warm H200. From the repository root with the patch applied (`git apply
# bench/results/2026-11-28-h200-sm89-fp8-one-wave/next-t8-cap.patch`), carrying .deps:
#   bash bench/results/2026-11-28-h200-sm89-fp8-one-wave/next-t8-cap.sh
# Question: does down (256 t8 tiles, 14 stages each) at m = 1 / 2 run as fast with three t8
# CTAs per SM allowed as at m = 4 / 8, where two fit (18.0 / 18.2 against 15.5 / 15.6 us in the
# plan sweep)? If the cap pays on down and o and costs nothing on qkv, the rule to adopt:
# cap = ceil(t8 grid / SMs) where that is below the CTAs that fit.
set -uo pipefail
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
  -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 && cmake --build build-device -j16 >> "$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
build-device/tests/lowbit_gpu_tests --gtest_filter='sm89_fp8_gemm.*:sm80_int8_gemm.*' --gtest_brief=1 > "$OUT/tests.log" 2>&1
echo "tests rc $?"; grep -E "^\[  (PASSED|FAILED)" "$OUT/tests.log"
# 0: no cap (the default); 2: at most two t8 CTAs per SM.
OUT="$OUT/ab" bash tools/dev/env-ab.sh LOWBIT_SM89_FP8_T8_CAP "0 2" 2 --suite suite1 --m 1,2 \
  --kernels '^(fp8_tensor|fp8_row|fp8_block|w8a8_int8)$' --no-check > "$OUT/ab-summary.txt" 2>&1
cat "$OUT/ab-summary.txt"
for f in "$OUT"/ab/*.txt; do echo "== $f"; grep -E "^(fp8_tensor|fp8_block|w8a8_int8) " "$f" | awk '{print $1, $2, $3, $6, $NF}'; done
LOWBIT_SM89_FP8_T8_CAP=2 build-device/lowbit bench --suite suite1 --m 1,2 --kernels '^(fp8_tensor|fp8_block|w8a8_int8)$' \
  > "$OUT/check-cap2.txt" 2>&1; echo "CPU-checked run with the cap: rc $?"
# Second question (select.cpp, "fp8 at m <= 8"): from m = 3 gate_up goes to sm90_fp8_gemm, a rule
# fitted when sm89 ran gate_up on t8 (38.3-38.9 us against 33.4-34.2); on t64 the plan sweep gave
# 29.9 / 30.2 us at m = 4 / 8 and the default (sm90) 31.2 in another call. Each family pinned:
OUT="$OUT/fam" bash tools/dev/env-ab.sh LOWBIT_CUDA_FAMILIES "sm89_fp8_gemm sm90_fp8_gemm" 2 --suite suite1 \
  --m 3,4,8 --kernels '^(fp8_tensor|fp8_row|fp8_block)$' --no-check > "$OUT/fam-summary.txt" 2>&1
for f in "$OUT"/fam/*.txt; do echo "== $f"; grep -E "^fp8_(tensor|block) +gate_up" "$f" | awk '{print $1, $2, $3, $6, $NF}'; done
cd "$OUT" && tar czf logs.tgz build.log tests.log ab fam check-cap2.txt && rm -rf build.log tests.log ab fam check-cap2.txt
