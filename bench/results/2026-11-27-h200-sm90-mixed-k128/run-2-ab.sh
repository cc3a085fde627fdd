#!/usr/bin/env bash
# Session 50: new = HEAD dd97e1d + k128 stages chosen by the plan (1200 clocks per stage) + the weight role split with
# zero points; old = HEAD dd97e1d. Alternated twice, Suite 1, then the new binary's CPU checks at m = 33 / 64.
set -uo pipefail
here=$PWD; L=$OUT/log.txt
exec > >(tee -a $L) 2>&1
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2"; }
for r in 1 2; do for v in old new; do
  timeout 80 /tmp/hc/$v/lowbit bench --suite suite1 --m 17,33,48,64,128,256,1024 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16|w4g128_bf16)$' --json "$OUT/j-$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ $OUT/j-$v-r$r.json "$v-r$r"
done; done
cd $OUT && tar czf json.tgz j-*.json && rm j-*.json && cd "$here"
timeout 120 /tmp/hc/new/lowbit bench --suite suite1 --m 17,33,64 --reps 1 --quick --kernels '^(w4g128_f16|w4g128asym_f16|w8_f16|w4g128_bf16|w4g128asym_bf16|w8g128_f16|w8_bf16)$' > $OUT/check.txt 2>&1; echo "check rc=$?"
grep -i -E "err|fail|mismatch" $OUT/check.txt | head -8
