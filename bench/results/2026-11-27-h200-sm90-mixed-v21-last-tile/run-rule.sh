#!/usr/bin/env bash
# v21 rule check: build (tree = both patches + the 3/8 rule), GPU tests, then XBOX 0 / 1 / rule A/B
set -uo pipefail
here=$PWD; L=$OUT/log.txt
exec > >(tee -a $L) 2>&1
t0=$(date +%s)
{ cmake -S . -B build-ab -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps \
  && cmake --build build-ab -j16 --target lowbit_cli lowbit_gpu_tests; } > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
T=build-ab/tests/lowbit_gpu_tests; B=build-ab/lowbit
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 240 $T --gtest_filter='sm90_mixed*:graph_capture*:sm90_fp8*:sm90_int8*' 2>&1 | grep -E "FAILED|PASSED|Failure|SKIPPED" | head -12
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2"; }
for r in 1 2; do for v in 0 1 r; do
  if [ $v = r ]; then unset LOWBIT_SM90_MIXED_XBOX; else export LOWBIT_SM90_MIXED_XBOX=$v; fi
  timeout 100 $B bench --suite suite1 --m 33,48,65,96,100,160,200,300,1000 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16|w8_bf16)$' --json "$OUT/j-$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ $OUT/j-$v-r$r.json "x$v-r$r" > /tmp/s-$v-r$r.txt
done; done
unset LOWBIT_SM90_MIXED_XBOX
timeout 100 $B bench --suite suite1 --m 40,100,200,300 --reps 1 --quick \
  --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16|w8_bf16|w4g128_bf16)$' > $OUT/check.txt 2>&1; echo "check rc=$?"
grep -c " ok " $OUT/check.txt; grep -E "FAIL|fail|error|nan" $OUT/check.txt | head -5
cat /tmp/s-*.txt > $OUT/summ.txt
echo "total $(( $(date +%s) - t0 )) s"
