#!/usr/bin/env bash
# Session 50, v18 probe: c128t128k128 (config 4, forced only) against the default plan (HEAD 47e219a's), one binary.
set -uo pipefail
here=$PWD; L=$OUT/log.txt
exec > >(tee -a $L) 2>&1
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
T=/tmp/hc/new/lowbit_gpu_tests
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 200 $T --gtest_filter='sm90_mixed*:graph_capture*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -12
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2" --tags; }
for r in 1 2; do for v in def 4,1 4,2 4,4; do
  unset LOWBIT_SM90_MIXED_PLAN; [ $v != def ] && export LOWBIT_SM90_MIXED_PLAN=$v
  timeout 60 /tmp/hc/new/lowbit bench --suite suite1 --m 96,128,192,256 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w4g128_bf16|w8_f16|w8_bf16)$' --json "$OUT/j-$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ $OUT/j-$v-r$r.json "$v-r$r" > /dev/null
done; done
unset LOWBIT_SM90_MIXED_PLAN
cd $OUT && tar czf json.tgz j-*.json && rm j-*.json && cd "$here"
for tool in racecheck synccheck memcheck; do
  LOWBIT_TEST_SMALL=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='sm90_mixed_gemm.stages_of_128_columns:sm90_mixed_gemm.every_config_and_split' > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" /tmp/san-$tool.log | head -4
done
