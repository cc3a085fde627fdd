#!/bin/bash
# For the next session (not run yet). Device call 2 (warm, after next-ab-call1.sh): two
# alternating rounds of /tmp/abbin/lowbit-{A,S,L,C}, 8 (variant, m) pairs each (~16 s a run on
# an H100: ~130 s), then a CPU-checked run of each variant at m = 16 / 24.
set -u
D=bench/results/2026-11-28-sm80-mixed-raw-decode-ab
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt; cat $OUT/gpu.txt
K='^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w8_f16|w8_bf16)$'
cd /tmp/abbin
for r in 1 2; do for v in A S L C; do
  ./lowbit-$v bench --suite suite1 --m 16,24 --kernels "$K" --no-check --json /tmp/$v$r.json > /tmp/$v$r.log 2>&1 || { echo "bench $v$r failed"; tail -5 /tmp/$v$r.log; }
  python3 $OLDPWD/$D/summ.py /tmp/$v$r.json $v$r >> $OUT/sums.txt
done; done
python3 - $OUT/sums.txt <<'PY'
import sys, collections
s = collections.defaultdict(list)
for line in open(sys.argv[1]):
    t, v, m, tot = line.split()[:4]
    s[(v, int(m), t[0])].append(float(tot))
mean = lambda x: sum(x) / len(x)
for (v, m) in sorted(set((k[0], k[1]) for k in s)):
    print("%-16s %3d  " % (v, m) + '  '.join('%s %s' % (x, ' '.join('%.1f' % y for y in s[(v, m, x)])) for x in 'ASLC')
          + '  ' + '  '.join('%s-A %+.2f' % (x, mean(s[(v, m, x)]) - mean(s[(v, m, 'A')])) for x in 'SLC'))
PY
for v in S L C; do
  ./lowbit-$v bench --suite suite1 --m 16,24 --kernels '^(w4g128_f16|w4g128asym_bf16|w8_f16|w8_bf16)$' --json /tmp/chk$v.json > /tmp/chk$v.log 2>&1; echo "check $v rc $?"
  python3 - /tmp/chk$v.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
recs = [r for r in d['records'] if isinstance(r.get('check'), dict)]
print('checked', len(recs), 'not ok', [(r['variant'], r['m'], r['layer']) for r in recs if r['check'].get('passed') is False])
PY
done
