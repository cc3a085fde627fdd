#!/bin/bash
# Device call 2 (warm, after call1.sh): two alternating rounds of /tmp/abbin/lowbit-{A,S,L,C,X},
# Suite 1 at m = 12 / 16 / 24, five variants, --no-check (each variant was CPU-checked in call 1).
set -u
D=bench/results/2026-11-28-sm80-mixed-next-ab
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt; cat $OUT/gpu.txt
K='^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w8_f16|w8_bf16)$'
R=$PWD; cd /tmp/abbin
for r in 1 2; do for v in A S L C X; do
  ./lowbit-$v bench --suite suite1 --m 12,16,24 --kernels "$K" --no-check --json $OUT/$v$r.json > /tmp/$v$r.log 2>&1 || { echo "bench $v$r failed"; tail -5 /tmp/$v$r.log; }
  python3 $R/$D/summ.py $OUT/$v$r.json $v$r >> $OUT/sums.txt
done; done
python3 $R/$D/table.py $OUT/sums.txt A S L C X
