#!/bin/bash
# Device call 2 (warm): three alternating rounds of /tmp/abbin/lowbit-{A,B,C,D}, then a CPU-checked run of D and B.
set -u
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
K=${K:-'^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w8_f16|w8g128_f16)$'}
M=${M:-9,12,16,24}
V=${V:-A B C D}
cd /tmp/abbin
for r in 1 2 3; do for v in $V; do
  ./lowbit-$v bench --suite suite1 --m $M --kernels "$K" --no-check --json /tmp/$v$r.json > /tmp/$v$r.log 2>&1 || { echo "bench $v$r failed"; tail -5 /tmp/$v$r.log; }
  python3 $OLDPWD/ab12/summ.py /tmp/$v$r.json $v$r >> $OUT/sums.txt
done; done
python3 - $OUT/sums.txt "$V" <<'PY'
import sys, collections
s = collections.defaultdict(list)
vs = sys.argv[2].split()
for line in open(sys.argv[1]):
    t, v, m, tot = line.split()[:4]
    s[(v, int(m), t[0])].append(float(tot))
mean = lambda x: sum(x) / len(x) if x else float('nan')
for (v, m) in sorted(set((k[0], k[1]) for k in s)):
    cols = '  '.join('%s %-16s' % (x, ' '.join('%.1f' % y for y in s[(v, m, x)])) for x in vs)
    d = '  '.join('%s-A %+.2f' % (x, mean(s[(v, m, x)]) - mean(s[(v, m, 'A')])) for x in vs[1:])
    print("%-16s %3d  %s  %s" % (v, m, cols, d))
PY
for v in D B; do
./lowbit-$v bench --suite suite1 --m 9,12,16,24 --kernels '^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w4g128asym_bf16|w8_f16|w8g128_f16|w8_bf16|w4_f16)$' --json /tmp/chk$v.json > /tmp/chk$v.log 2>&1; echo "check $v rc $?"
python3 - /tmp/chk$v.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
recs = [r for r in d['records'] if isinstance(r.get('check'), dict)]
print('checked', len(recs), 'not ok', [(r['variant'], r['m'], r['layer']) for r in recs if r['check'].get('passed') is False])
mx = {}
for r in recs:
    k = r['variant']; mx[k] = max(mx.get(k, 0), r['check'].get('rel_err', 0))
print(' '.join('%s %.2e' % kv for kv in sorted(mx.items())))
print(sorted(set(r['kernel'] for r in recs)))
PY
done
