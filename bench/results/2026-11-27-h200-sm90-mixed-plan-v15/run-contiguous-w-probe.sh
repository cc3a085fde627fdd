#!/usr/bin/env bash
# For the next session (not run in session 48). Apply sm90-mixed-contiguous-w-probe.UNMEASURED.patch
# (on 3b3f20d or later), build lowbit for 90a, carry it stripped and xz'd as <dir>/bins.tar.xz
# (a folder in .git/info/exclude, passed in `carry`), and run this from the repository root on the
# device: S=<dir> bash bench/results/2026-11-27-h200-sm90-mixed-plan-v15/run-contiguous-w-probe.sh
# LOWBIT_SM90_MIXED_PLAN: 0 the kernel, 3 no decode, 4 no wgmma, 5 neither, 6 the weight bytes of
# each stage read as one contiguous 4 KB (8 KB for 8-bit) piece (wrong data, same bytes), 7 = 6
# without decode and wgmma. The same splits for all (the plan's clocks are equal).
set -uo pipefail
here=$PWD; S=${S:-ab9}
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/$S/bins.tar.xz" | tar xf - && cd "$here"
B=/tmp/hc/lowbit
for r in 1 2; do for v in 0 5 6 7; do
  LOWBIT_SM90_MIXED_PLAN=$v timeout 40 $B bench --suite suite1 --m 64 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w8_f16)$' --json "$OUT/p$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  python3 - "$OUT/p$v-r$r.json" "p$v-r$r" <<'PY'
import json, sys, collections
t = collections.defaultdict(dict)
for r in json.load(open(sys.argv[1]))['records']:
    if 'us' in r and not r['variant'].startswith('cublas'):
        t[(r['variant'], r['m'])][r['layer']] = (r['us'], r.get('kernel', ''))
for (v, m), ls in sorted(t.items()):
    print(sys.argv[2], v, m, 'sum %.1f' % sum(x[0] for x in ls.values()),
          ' '.join('%s %.2f (%s)' % (l, ls[l][0], ls[l][1].split('_w')[-1]) for l in ('qkv', 'o', 'gate_up', 'down') if l in ls))
PY
done; done
