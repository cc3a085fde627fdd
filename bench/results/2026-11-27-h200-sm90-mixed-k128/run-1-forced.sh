#!/usr/bin/env bash
# Session 50: new = k128-stages + producer-parity-zeros patches (ab9/keep/both-s50.patch), old = HEAD dd97e1d.
set -uo pipefail
here=$PWD; L=$OUT/log.txt
exec > >(tee -a $L) 2>&1
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
T=/tmp/hc/new/lowbit_gpu_tests
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 150 $T --gtest_filter='sm90_mixed*:graph_capture*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -12
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2" --tags; }
for r in 1 2; do for v in old def 3,1 3,2 3,4; do
  b=/tmp/hc/new/lowbit; unset LOWBIT_SM90_MIXED_PLAN
  if [ $v = old ]; then b=/tmp/hc/old/lowbit; elif [ $v != def ]; then export LOWBIT_SM90_MIXED_PLAN=$v; fi
  timeout 50 $b bench --suite suite1 --m 33,64,128 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16)$' --json "$OUT/j-$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ $OUT/j-$v-r$r.json "$v-r$r"
done; done
unset LOWBIT_SM90_MIXED_PLAN
cd $OUT && tar czf json.tgz j-*.json && rm j-*.json && cd "$here"
for tool in racecheck synccheck memcheck; do
  LOWBIT_TEST_SMALL=1 timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='sm90_mixed_gemm.*' > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" /tmp/san-$tool.log | head -4
done
