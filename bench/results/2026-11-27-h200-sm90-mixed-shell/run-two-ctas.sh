#!/usr/bin/env bash
# v17 measurement: c128t64x2 (two CTAs per SM, 6 stages, 80 regs, producer 24 / consumers 104) forced with splits 1, 2, 4
# against the default plan, W4 g128 f16 and W8 per-channel f16, m = 33, 64, 128, two rounds; correctness first.
set -uo pipefail
here=$PWD
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
timeout 120 /tmp/hc/new/lowbit_gpu_tests --gtest_filter='sm90_mixed_gemm.every_config_and_split:sm90_mixed_gemm.every_format_fp16' 2>&1 | grep -E "OK \]|FAILED|PASSED|Failure|rror" | head -12
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2" --tags; }
for r in 1 2; do for v in def 3,1 3,2 3,4; do
  if [ $v = def ]; then unset LOWBIT_SM90_MIXED_PLAN; else export LOWBIT_SM90_MIXED_PLAN=$v; fi
  timeout 60 /tmp/hc/new/lowbit bench --suite suite1 --m 33,64,128 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w8_f16)$' --json "/tmp/p-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ /tmp/p-r$r.json "$v-r$r"
done; done
