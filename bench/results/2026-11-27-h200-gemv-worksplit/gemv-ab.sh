#!/bin/bash
# A/B of two lowbit binaries (ab9/bin/lowbit-{A,B}), GEMV variants, alternating rounds.
set -u
cd ab9/bin
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
K=${K:-'^(w4g128_f16|w4g128_bf16|w8_f16|w2g128_f16)$'}
for r in $(seq 1 ${ROUNDS:-3}); do
  for v in A B; do
    ./lowbit-$v bench --suite suite1 --m ${MS:-1} --kernels "$K" --no-check --json /tmp/$v$r.json > /tmp/$v$r.log 2>&1 || { echo "bench $v failed"; tail -5 /tmp/$v$r.log; }
    python3 ../summ.py /tmp/$v$r.json $v$r >> $OUT/sums.txt
  done
done
for v in A B; do
  ./lowbit-$v bench --suite suite1 --m 2,8 --kernels '^(w4g128_f16|w8_f16)$' --no-check --json /tmp/${v}m8.json > /dev/null 2>&1
  python3 ../summ.py /tmp/${v}m8.json ${v}m28 >> $OUT/sums.txt
done
sort -k2,2 -k3,3n -k1,1 $OUT/sums.txt > $OUT/sorted.txt
cat $OUT/sorted.txt
./lowbit-B bench --suite suite1 --m 1,3,8 --kernels '^(w4g128_f16|w4g128asym_bf16|w8_f16|w3g128_f16)$' --json /tmp/chk.json > /tmp/chk.log 2>&1; echo "check rc $?"
python3 - <<'PY'
import json
d=json.load(open('/tmp/chk.json'))
recs=[r for r in d['records'] if isinstance(r.get('check'),dict)]
print('checked',len(recs),'max rel err',max(r['check'].get('rel_err',0) for r in recs) if recs else None,
      'not ok',[(r['variant'],r['m'],r['layer']) for r in recs if r['check'].get('passed') is False])
PY
