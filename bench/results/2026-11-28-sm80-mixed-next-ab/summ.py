# Suite-1 sums per (variant, m) of a lowbit bench json, with the per-layer figures.
import json, sys
d = json.load(open(sys.argv[1])); tag = sys.argv[2]
per = {}
for r in d['records']:
    if r['suite'] == 'suite1' and not r['variant'].startswith('cublas'):
        per.setdefault((r['variant'], r['m']), []).append((r['layer'], round(r['us'], 2)))
for (v, m), l in sorted(per.items()):
    print(tag, v, m, round(sum(x[1] for x in l), 2), ' '.join('%s=%.2f' % x for x in l))
