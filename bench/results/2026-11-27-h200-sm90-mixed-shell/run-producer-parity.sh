#!/usr/bin/env bash
# v17: each sm90_mixed_gemm producer role on two threads (even / odd iterations) against HEAD 12df1d1.
# 1) old / new alternated twice, Suite 1; 2) the new binary's sm90 / graph tests; 3) sanitizers on sm90_mixed_gemm.* (small).
set -uo pipefail
here=$PWD
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2"; }
for r in 1 2; do for v in old new; do
  timeout 60 /tmp/hc/$v/lowbit bench --suite suite1 --m 33,64,128,256,1024 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16|w4g128_bf16)$' --json "/tmp/$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ /tmp/$v-r$r.json "$v-r$r"
done; done
timeout 60 /tmp/hc/new/lowbit bench --suite suite1 --m 64 --reps 1 --quick --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16|w4g128_bf16)$' 2>&1 | grep -i -E "err|fail|check" | head -8
timeout 120 /tmp/hc/new/lowbit_gpu_tests --gtest_filter='sm90_mixed*:graph_capture*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -12
for tool in racecheck synccheck memcheck; do
  LOWBIT_TEST_SMALL=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/hc/new/lowbit_gpu_tests --gtest_filter='sm90_mixed_gemm.*' > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" /tmp/san-$tool.log | head -4
done
