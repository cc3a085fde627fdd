#!/usr/bin/env bash
# v16 (scale slab chunks + copy warp) against HEAD 12df1d1: GPU tests of the new binary, then old / new alternated twice.
set -uo pipefail
here=$PWD
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
timeout 200 /tmp/hc/new/lowbit_gpu_tests --gtest_filter='sm90_mixed*:graph_capture*' 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED|OK \] .*\(|^\[==========\]" | tail -25
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2" --tags; }
for r in 1 2; do for v in old new; do
  timeout 100 /tmp/hc/$v/lowbit bench --suite suite1 --m ${M:-33,64,128,256,1024} --no-check --reps 3 --min-replay-ms 30 \
    --kernels "${KERN:-^(w4g128_f16|w4g128asym_f16|w8_f16)$}" --json "/tmp/$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ /tmp/$v-r$r.json "$v-r$r"
done; done
