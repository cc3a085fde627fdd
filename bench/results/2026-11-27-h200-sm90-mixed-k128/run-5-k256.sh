#!/usr/bin/env bash
# Session 50, v19 probe: c128t64k256 (config 5, 256-column stages, 3 stages, forced only) against the default (v18).
set -uo pipefail
here=$PWD; L=$OUT/log.txt
exec > >(tee -a $L) 2>&1
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
T=/tmp/hc/new/lowbit_gpu_tests
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 200 $T --gtest_filter='sm90_mixed*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -12
for r in 1 2; do for v in def 5,1 5,2 5,4; do
  unset LOWBIT_SM90_MIXED_PLAN; [ $v != def ] && export LOWBIT_SM90_MIXED_PLAN=$v
  timeout 50 /tmp/hc/new/lowbit bench --suite suite1 --m 33,64 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16)$' --json "$OUT/j-$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
done; done
unset LOWBIT_SM90_MIXED_PLAN
cd $OUT && tar czf json.tgz j-*.json && rm j-*.json && cd "$here"
for tool in racecheck memcheck; do
  LOWBIT_TEST_SMALL=1 timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='sm90_mixed_gemm.stages_of_128_columns' > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" /tmp/san-$tool.log | head -4
done
