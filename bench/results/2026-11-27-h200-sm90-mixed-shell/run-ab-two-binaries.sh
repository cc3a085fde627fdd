#!/usr/bin/env bash
# v16 (scale slab chunks + copy warp) against HEAD 12df1d1: GPU tests of the new binary, then old / new alternated twice.
set -uo pipefail
here=$PWD
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/ab9/bins.tar.xz" | tar xf - && cd "$here"
timeout 200 /tmp/hc/new/lowbit_gpu_tests --gtest_filter='sm90_mixed*:graph_capture*' 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED|OK \] .*\(|^\[==========\]" | tail -25
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
for r in 1 2; do for v in old new; do
  timeout 100 /tmp/hc/$v/lowbit bench --suite suite1 --m ${M:-33,64,128,256,1024} --no-check --reps 3 --min-replay-ms 30 \
    --kernels "${KERN:-^(w4g128_f16|w4g128asym_f16|w8_f16)$}" --json "/tmp/$v-r$r.json" > /dev/null 2>&1 || echo "fail $v"
  summ /tmp/$v-r$r.json "$v-r$r"
done; done
