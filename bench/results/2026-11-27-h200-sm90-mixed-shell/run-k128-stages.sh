#!/usr/bin/env bash
# For the next session (built in session 49, not run): apply sm90-mixed-k128-stages.UNMEASURED.patch on dde0393 or later,
# build lowbit and lowbit_gpu_tests for 90a, carry them stripped and xz'd (-T1, one stream) as <dir>/bins.tar.xz with
# a new/ folder, and run from the repository root on the device: S=<dir> bash <this script>.
# 1) the new tests and every configuration with splits, then racecheck / memcheck on them (small);
# 2) the default plan against c128t64k128 forced with 1, 2, 4 splits (LOWBIT_SM90_MIXED_PLAN=3,<s>), two rounds, W4 g128
#    f16, W4 g128 asym f16, W8 per-channel f16 at m = 33, 64, 128: compare per layer, best split each.
set -uo pipefail
here=$PWD; S=${S:-ab9}
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/$S/bins.tar.xz" | tar xf - && cd "$here"
T=/tmp/hc/new/lowbit_gpu_tests
timeout 150 $T --gtest_filter='sm90_mixed_gemm.stages_of_128_columns:sm90_mixed_gemm.every_config_and_split:sm90_mixed_gemm.plan*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -12
for tool in racecheck memcheck; do
  LOWBIT_TEST_SMALL=1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='sm90_mixed_gemm.stages_of_128_columns' > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" /tmp/san-$tool.log | head -3
done
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2" --tags; }
for r in 1 2; do for v in def 3,1 3,2 3,4; do
  if [ $v = def ]; then unset LOWBIT_SM90_MIXED_PLAN; else export LOWBIT_SM90_MIXED_PLAN=$v; fi
  timeout 60 /tmp/hc/new/lowbit bench --suite suite1 --m 33,64,128 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16)$' --json "/tmp/k-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ /tmp/k-r$r.json "$v-r$r"
done; done
