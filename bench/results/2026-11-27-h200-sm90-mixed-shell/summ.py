#!/usr/bin/env python3
"""Suite-1 sums and per-layer times of one `lowbit bench --json` file, cuBLAS rows left out.
usage: summ.py FILE LABEL [--tags]   (--tags: each layer's kernel tag after its time)"""
import collections
import json
import sys

path, label = sys.argv[1], sys.argv[2]
tags = '--tags' in sys.argv[3:]
t = collections.defaultdict(dict)
for r in json.load(open(path))['records']:
    if 'us' in r and not r['variant'].startswith('cublas'):
        t[(r['variant'], r['m'])][r['layer']] = (r['us'], r.get('kernel', ''))
for (v, m), ls in sorted(t.items()):
    parts = []
    for l in ('qkv', 'o', 'gate_up', 'down'):
        if l in ls:
            us, kernel = ls[l]
            parts.append('%s %.2f' % (l, us) + (' (%s)' % kernel.split('_w')[-1] if tags else ''))
    print(label, v, m, 'sum %.1f' % sum(x[0] for x in ls.values()), ' '.join(parts))
