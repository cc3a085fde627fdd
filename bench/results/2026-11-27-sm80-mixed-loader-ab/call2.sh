#!/bin/bash
# Device call 2 (warm): A/B of /tmp/abbin/lowbit-{A,B}, three alternating rounds, then a CPU check of B.
set -u
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
K='^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w8_f16)$'
M=${M:-12,16,24}
cd /tmp/abbin
for r in 1 2 3; do for v in A B; do
  ./lowbit-$v bench --suite suite1 --m $M --kernels "$K" --no-check --json /tmp/$v$r.json > /tmp/$v$r.log 2>&1 || { echo "bench $v$r failed"; tail -5 /tmp/$v$r.log; }
  python3 $OLDPWD/ab11/summ.py /tmp/$v$r.json $v$r >> $OUT/sums.txt
done; done
python3 - $OUT/sums.txt <<'PY'
import sys, collections
s = collections.defaultdict(list)
for line in open(sys.argv[1]):
    t, v, m, tot = line.split()[:4]
    s[(v, int(m), t[0])].append(float(tot))
print("%-16s %3s  %-22s %-22s  B-A (mean)" % ("variant", "m", "A rounds", "B rounds"))
for (v, m) in sorted(set((k[0], k[1]) for k in s)):
    a, b = s[(v, m, 'A')], s[(v, m, 'B')]
    print("%-16s %3d  %-22s %-22s  %+.2f" % (v, m, ' '.join('%.1f' % x for x in a), ' '.join('%.1f' % x for x in b), sum(b) / len(b) - sum(a) / len(a)))
PY
./lowbit-B bench --suite suite1 --m 9,16,24,32 --kernels '^(w4g128_f16|w4g128asym_bf16|w8_f16|w8_bf16)$' --json /tmp/chk.json > /tmp/chk.log 2>&1; echo "check rc $?"
python3 - <<'PY'
import json
d = json.load(open('/tmp/chk.json'))
recs = [r for r in d['records'] if isinstance(r.get('check'), dict)]
print('checked', len(recs), 'max rel err', max(r['check'].get('rel_err', 0) for r in recs) if recs else None,
      'not ok', [(r['variant'], r['m'], r['layer']) for r in recs if r['check'].get('passed') is False])
print(sorted(set(r['kernel'] for r in recs)))
PY
