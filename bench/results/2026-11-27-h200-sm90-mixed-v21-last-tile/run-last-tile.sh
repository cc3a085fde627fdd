#!/usr/bin/env bash
# For the next session (built in session 50, never run): apply sm90-mixed-last-tile.UNMEASURED.patch on 5c3b3b9 or
# later, build lowbit and lowbit_gpu_tests for 90a, carry them stripped and xz'd (-T1) as <dir>/bins.tar.xz with a
# new/ folder, and run from the repository root on the device: S=<dir> bash <this script>.
# 1) sm90_mixed / graph tests, racecheck / synccheck / memcheck on sm90_mixed_gemm.* (small);
# 2) LOWBIT_SM90_MIXED_XBOX=0 (full activation boxes everywhere) against the default (the last token tile's boxes
#    of its own rows), two rounds, Suite 1 at m with a partial last tile; 3) the CPU checks at those m.
set -uo pipefail
here=$PWD; S=${S:-ab9}; L=$OUT/log.txt
exec > >(tee -a $L) 2>&1
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/$S/bins.tar.xz" | tar xf - && cd "$here"
T=/tmp/hc/new/lowbit_gpu_tests
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 200 $T --gtest_filter='sm90_mixed*:graph_capture*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -12
for tool in racecheck synccheck memcheck; do
  LOWBIT_TEST_SMALL=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='sm90_mixed_gemm.*' > /tmp/san-$tool.log 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" /tmp/san-$tool.log | head -3
done
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2"; }
for r in 1 2; do for v in 0 1; do
  export LOWBIT_SM90_MIXED_XBOX=$v
  timeout 120 /tmp/hc/new/lowbit bench --suite suite1 --m 65,100,160,200,300,500,1000 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16|w8_bf16)$' --json "$OUT/j-x$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ $OUT/j-x$v-r$r.json "xbox$v-r$r"
done; done
unset LOWBIT_SM90_MIXED_XBOX
timeout 150 /tmp/hc/new/lowbit bench --suite suite1 --m 65,100,160,300,1000 --reps 1 --quick \
  --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16|w8_bf16|w4g128_bf16)$' > $OUT/check.txt 2>&1; echo "check rc=$?"
grep -c " ok " $OUT/check.txt; grep -E "FAIL|fail|error|nan" $OUT/check.txt | head -5
