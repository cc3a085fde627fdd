#!/usr/bin/env bash
# Session 50, v18: old = HEAD 47e219a, new = + c128t128k128 in the plan (1500 clocks per stage; not for bf16 x 8-bit).
set -uo pipefail
here=$PWD; L=$OUT/log.txt
exec > >(tee -a $L) 2>&1
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 200 /tmp/hc/new/lowbit_gpu_tests --gtest_filter='sm90_mixed*:graph_capture*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -12
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2"; }
for r in 1 2; do for v in old new; do
  timeout 120 /tmp/hc/$v/lowbit bench --suite suite1 --m 65,96,128,192,256,320,384,512,1024 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w8_f16|w8_bf16)$' --json "$OUT/j-$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ $OUT/j-$v-r$r.json "$v-r$r" > /dev/null
done; done
cd $OUT && tar czf json.tgz j-*.json && rm j-*.json && cd "$here"
timeout 150 /tmp/hc/new/lowbit bench --suite suite1 --m 65,128,256,1024 --reps 1 --quick --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16|w4g128_bf16|w4g128asym_bf16|w8g128_f16|w8_bf16)$' > $OUT/check.txt 2>&1; echo "check rc=$?"
grep -c " ok " $OUT/check.txt; grep -E "FAIL|fail|error" $OUT/check.txt | head -5
