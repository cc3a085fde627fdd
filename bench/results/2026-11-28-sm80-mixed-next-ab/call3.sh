#!/bin/bash
# Device call 3 (warm, after call2.sh): Y = S + L (no C); CPU-checked at m = 16, then two
# alternating rounds of A, X, Y at m = 12 / 16 / 24. Outputs in one tarball.
set -u
P=bench/results/2026-11-28-sm80-mixed-raw-decode-ab; D=bench/results/2026-11-28-sm80-mixed-next-ab
for p in next-sym-wide-loop next-loader-one-block; do patch -p1 < $P/$p.patch > /dev/null || { echo "patch $p failed"; exit 1; }; done
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bY.log 2>&1 || { tail -30 /tmp/bY.log; exit 1; }
cp build/lowbit /tmp/abbin/lowbit-Y; echo "Y built in $(( $(date +%s) - t0 )) s"
for p in next-loader-one-block next-sym-wide-loop; do patch -R -p1 < $P/$p.patch > /dev/null; done
mkdir -p /tmp/o3
/tmp/abbin/lowbit-Y bench --suite suite1 --m 16 --kernels '^(w4g128_f16|w4g128asym_bf16|w8_f16|w8_bf16)$' --json /tmp/o3/check-Y.json > /tmp/o3/check-Y.txt 2>&1; echo "check Y rc $?"
python3 - /tmp/o3/check-Y.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
recs = [r for r in d['records'] if isinstance(r.get('check'), dict)]
print('  checked', len(recs), 'not ok', [(r['variant'], r['m'], r['layer']) for r in recs if r['check'].get('passed') is False],
      'max rel err %.2e' % max(r['check'].get('rel_err', 0) for r in recs))
PY
K='^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w8_f16|w8_bf16)$'
R=$PWD; cd /tmp/abbin
for r in 1 2; do for v in A X Y; do
  ./lowbit-$v bench --suite suite1 --m 12,16,24 --kernels "$K" --no-check --json /tmp/o3/$v$r.json > /tmp/$v$r.log 2>&1 || { echo "bench $v$r failed"; tail -5 /tmp/$v$r.log; }
  python3 $R/$D/summ.py /tmp/o3/$v$r.json $v$r >> /tmp/o3/sums.txt
done; done
python3 $R/$D/table.py /tmp/o3/sums.txt A X Y
cd /tmp/o3 && tar czf $OUT/call3.tgz .
