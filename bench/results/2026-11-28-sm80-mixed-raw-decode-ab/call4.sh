#!/bin/bash
# Device call 4: N = HEAD (the tree), O = f470319 (ab12/N.patch reversed), lowbit_cli only;
# two alternating rounds at m = 12 / 16, then a CPU-checked run of N at m = 16.
set -u
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt; cat $OUT/gpu.txt
mkdir -p /tmp/abbin
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bN.log 2>&1 || { tail -30 /tmp/bN.log; exit 1; }
cp build/lowbit /tmp/abbin/lowbit-N; echo "N built in $(( $(date +%s) - t0 )) s"
patch -R -p1 < ab12/N.patch > /dev/null || { echo "reverse failed"; exit 1; }
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bO.log 2>&1 || { tail -30 /tmp/bO.log; exit 1; }
cp build/lowbit /tmp/abbin/lowbit-O; echo "O built in $(( $(date +%s) - t0 )) s"
patch -p1 < ab12/N.patch > /dev/null
K='^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w8_f16|w8g128_f16)$'
cd /tmp/abbin
for r in 1 2; do for v in O N; do
  ./lowbit-$v bench --suite suite1 --m 12,16 --kernels "$K" --no-check --json /tmp/$v$r.json > /tmp/$v$r.log 2>&1 || { echo "bench $v$r failed"; tail -5 /tmp/$v$r.log; }
  python3 $OLDPWD/ab12/summ.py /tmp/$v$r.json $v$r >> $OUT/sums.txt
done; done
python3 - $OUT/sums.txt <<'PY'
import sys, collections
s = collections.defaultdict(list)
for line in open(sys.argv[1]):
    t, v, m, tot = line.split()[:4]
    s[(v, int(m), t[0])].append(float(tot))
mean = lambda x: sum(x) / len(x)
for (v, m) in sorted(set((k[0], k[1]) for k in s)):
    a, e = s[(v, m, 'O')], s[(v, m, 'N')]
    print("%-14s %3d  O %-12s N %-12s  N-O %+.2f" % (v, m, ' '.join('%.1f' % x for x in a), ' '.join('%.1f' % x for x in e), mean(e) - mean(a)))
PY
./lowbit-N bench --suite suite1 --m 16 --kernels "$K" --json $OUT/bench-N-m16.json > $OUT/bench-N-m16.txt 2>&1; echo "check N rc $?"
python3 - $OUT/bench-N-m16.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
recs = [r for r in d['records'] if isinstance(r.get('check'), dict)]
print('checked', len(recs), 'not ok', [(r['variant'], r['m'], r['layer']) for r in recs if r['check'].get('passed') is False],
      'max rel err %.2e' % max(r['check'].get('rel_err', 0) for r in recs))
for x in d['summaries']['suite1']:
    if x.get('sum_us'): print(x['variant'], x['m'], round(x['sum_us'], 1))
PY
