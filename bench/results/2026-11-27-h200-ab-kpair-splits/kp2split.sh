#!/usr/bin/env bash
# (Measured with the rule at m >= 64; kept narrowed to m = 64 and 128, where it won: fp8_gemm.md v31.)
# fp8_gemm.md v31 kept: the K-pair rule extended to two-split plans from m = 64 on. Tests, then
# down (4096 x 14336) at m = 48 / 64 / 96 / 128 with the rule (LOWBIT_SM90_FP8_KPAIR=1, the
# default) and without it (=0), two alternating rounds.
set -uo pipefail
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > "$OUT/cmake.log" 2>&1
ninja -C build-device -j16 lowbit tests/lowbit_gpu_tests > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name --format=csv,noheader
T=build-device/tests/lowbit_gpu_tests
$T --gtest_filter='sm90_fp8_gemm.*:sm90_int8_gemm.*' > "$OUT/tests.log" 2>&1; grep -E "^\[  (PASSED|FAILED) |Failure" "$OUT/tests.log"
LOWBIT_TEST_SMALL=1 compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_filter='sm90_fp8_gemm.k_pairs:sm90_fp8_gemm.forced_plans:sm90_fp8_gemm.chosen_by_default' > "$OUT/memcheck.log" 2>&1; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " "$OUT/memcheck.log"
for r in 1 2; do
  for v in 1 0; do
    LOWBIT_SM90_FP8_KPAIR=$v build-device/lowbit bench --shapes 4096x14336 --m 48,64,96,128 --kernels '^fp8_(tensor|row|block)$' --no-check > "$OUT/b-$v-$r.txt" 2>&1
    echo "== KPAIR=$v round $r"
    grep -E "^fp8_(tensor|row|block) " "$OUT/b-$v-$r.txt" | awk '{printf "%s %s %s %s\n", $1, $3, $6, $NF}' | paste - - - -
  done
done
cd "$OUT" && tar czf bench-runs.tgz b-*.txt && rm -f b-*.txt
