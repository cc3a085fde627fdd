#!/usr/bin/env bash
# Session 50, v20: activation boxes of m rows (rounded up to 8) for a single token tile; one binary, knob
# LOWBIT_SM90_MIXED_XBOX=0 (full boxes, HEAD 8fd29a1's behaviour) against the default.
set -uo pipefail
here=$PWD; L=$OUT/log.txt
exec > >(tee -a $L) 2>&1
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
T=/tmp/hc/new/lowbit_gpu_tests
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 200 $T --gtest_filter='sm90_mixed*:graph_capture*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -12
for r in 1 2; do for v in 0 1; do
  export LOWBIT_SM90_MIXED_XBOX=$v
  timeout 60 /tmp/hc/new/lowbit bench --suite suite1 --m 17,33,48,65,96 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w8_f16)$' --json "$OUT/j-x$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
done; done
unset LOWBIT_SM90_MIXED_XBOX
cd $OUT && tar czf json.tgz j-*.json && rm j-*.json && cd "$here"
timeout 120 /tmp/hc/new/lowbit bench --suite suite1 --m 17,33,65,100 --reps 1 --quick --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16|w4g128_bf16|w8g128_f16|w8_bf16)$' > $OUT/check.txt 2>&1; echo "check rc=$?"
grep -c " ok " $OUT/check.txt; grep -E "FAIL|fail|error|nan" $OUT/check.txt | head -5
for tool in racecheck memcheck; do
  LOWBIT_TEST_SMALL=1 timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='sm90_mixed_gemm.*' > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" /tmp/san-$tool.log | head -4
done
