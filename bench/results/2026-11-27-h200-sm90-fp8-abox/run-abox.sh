#!/usr/bin/env bash
# For the next session (built in session 50, never run): apply sm90-fp8-abox.UNMEASURED.patch on 6c775cf or later,
# build lowbit and lowbit_gpu_tests for 90a, carry them stripped and xz'd (-T1) as <dir>/bins.tar.xz with a new/
# folder, and run from the repository root on the device: S=<dir> bash <this script>.
# 1) sm90_fp8 / sm90_int8 / graph tests, racecheck / synccheck / memcheck on sm90_fp8_gemm.* and sm90_int8_gemm.*;
# 2) LOWBIT_SM90_FP8_ABOX=0 (full A boxes, the old behaviour) against the default, two rounds, Suite 1 at
#    m = 9..100 for the fp8 and W8A8 variants (sm90_fp8_gemm takes m > 8), sums per m; 3) the CPU checks at those m.
set -uo pipefail
here=$PWD; S=${S:-ab9}; L=$OUT/log.txt
exec > >(tee -a $L) 2>&1
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/$S/bins.tar.xz" | tar xf - && cd "$here"
T=/tmp/hc/new/lowbit_gpu_tests
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 200 $T --gtest_filter='sm90_fp8*:sm90_int8*:graph_capture*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -12
for tool in racecheck synccheck memcheck; do
  LOWBIT_TEST_SMALL=1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='sm90_fp8_gemm.*:sm90_int8_gemm.*' > /tmp/san-$tool.log 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" /tmp/san-$tool.log | head -3
done
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2"; }
for r in 1 2; do for v in 0 1; do
  export LOWBIT_SM90_FP8_ABOX=$v
  timeout 90 /tmp/hc/new/lowbit bench --suite suite1 --m 9,16,33,64,65,100 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(fp8_tensor|fp8_row|fp8_block|w8a8_int8)$' --json "$OUT/j-a$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ $OUT/j-a$v-r$r.json "abox$v-r$r"
done; done
unset LOWBIT_SM90_FP8_ABOX
timeout 120 /tmp/hc/new/lowbit bench --suite suite1 --m 9,16,33,65,100 --reps 1 --quick \
  --kernels '^(fp8_tensor|fp8_row|fp8_block|w8a8_int8)$' > $OUT/check.txt 2>&1; echo "check rc=$?"
grep -c " ok " $OUT/check.txt; grep -E "FAIL|fail|error|nan" $OUT/check.txt | head -5
