#!/usr/bin/env bash
# Session 58: sm89_fp8_gemm's one-wave rule (t64 where t8's grid is several waves), on the device.
set -uo pipefail
cd "$(dirname "$0")/.."
step() { echo "== $(date +%T) $*"; }
step build
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
  -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 && cmake --build build-device -j16 >> "$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
step tests
build-device/tests/lowbit_gpu_tests --gtest_filter='sm89_fp8_gemm.*:sm80_int8_gemm.*:sm90_fp8_gemm.*:sm90_int8_gemm.*:graph_capture.*:gemm_api*' \
  --gtest_brief=1 > "$OUT/tests.log" 2>&1; echo "tests rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED)" "$OUT/tests.log"
step memcheck
LOWBIT_TEST_SMALL=1 compute-sanitizer --tool memcheck --error-exitcode 99 build-device/tests/lowbit_gpu_tests \
  --gtest_filter='sm89_fp8_gemm.*:sm80_int8_gemm.*' --gtest_brief=1 > "$OUT/memcheck.log" 2>&1; echo "memcheck rc $?"
grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" "$OUT/memcheck.log"
step "A/B knob 1 (new) / 0 (old), two rounds"
OUT="$OUT/ab" bash tools/dev/env-ab.sh LOWBIT_SM89_FP8_ONE_WAVE "1 0" 2 --suite suite1 --m 1,2,4,8 \
  --kernels '^(fp8_tensor|fp8_row|fp8_block|w8a8_int8)$' --no-check > "$OUT/ab-summary.txt" 2>&1
cat "$OUT/ab-summary.txt"
step "CPU-checked run of the new default"
build-device/lowbit bench --suite suite1 --m 1,2,3,4,5,8 --kernels '^(fp8_tensor|fp8_row|fp8_block|w8a8_int8)$' \
  --json "$OUT/check.json" > "$OUT/check.txt" 2>&1; echo "check rc $?"
grep -iE "fail|checked|summary" "$OUT/check.txt" | head -20
step done
cd "$OUT" && tar czf logs.tgz build.log tests.log memcheck.log ab ab-summary.txt check.txt && rm -rf build.log tests.log memcheck.log ab check.txt
