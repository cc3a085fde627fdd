#!/usr/bin/env bash
# TMA-instruction probe, m = 64, W4 g128 f16 and W8 per-channel, two rounds. Plans: 0 real, 12 real without the
# scale TMA, 5 neither (no decode, no wgmma), 10 neither without the scale TMA, 11 neither with W as two TMAs,
# 13 neither with X as two TMAs.
set -uo pipefail
here=$PWD
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
B=/tmp/hc/lowbit
summ() { python3 - "$1" "$2" <<'PY'
import json, sys, collections
t = collections.defaultdict(dict)
for r in json.load(open(sys.argv[1]))['records']:
    if 'us' in r and not r['variant'].startswith('cublas'):
        t[(r['variant'], r['m'])][r['layer']] = (r['us'], r.get('kernel', ''))
for (v, m), ls in sorted(t.items()):
    print(sys.argv[2], v, m, 'sum %.1f' % sum(x[0] for x in ls.values()),
          ' '.join('%s %.2f (%s)' % (l, ls[l][0], ls[l][1].split('_w')[-1]) for l in ('qkv', 'o', 'gate_up', 'down') if l in ls))
PY
}
for r in 1 2; do for v in ${PLANS:-0 12 5 10 11 13}; do
  LOWBIT_SM90_MIXED_PLAN=$v timeout 40 $B bench --suite suite1 --m ${M:-64} --no-check --reps 3 --min-replay-ms 30 \
    --kernels "${KERN:-^(w4g128_f16|w8_f16)$}" --json "/tmp/p$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ /tmp/p$v-r$r.json "p$v-r$r"
done; done
