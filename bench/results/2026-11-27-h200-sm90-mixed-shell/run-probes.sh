#!/usr/bin/env bash
# TMA-instruction probe, m = 64, W4 g128 f16 and W8 per-channel, two rounds. Plans: 0 real, 12 real without the
# scale TMA, 5 neither (no decode, no wgmma), 10 neither without the scale TMA, 11 neither with W as two TMAs,
# 13 neither with X as two TMAs.
set -uo pipefail
here=$PWD
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
B=/tmp/hc/lowbit
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2" --tags; }
for r in 1 2; do for v in ${PLANS:-0 12 5 10 11 13}; do
  LOWBIT_SM90_MIXED_PLAN=$v timeout 40 $B bench --suite suite1 --m ${M:-64} --no-check --reps 3 --min-replay-ms 30 \
    --kernels "${KERN:-^(w4g128_f16|w8_f16)$}" --json "/tmp/p$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ /tmp/p$v-r$r.json "p$v-r$r"
done; done
