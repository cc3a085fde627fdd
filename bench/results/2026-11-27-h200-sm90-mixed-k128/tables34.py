#!/usr/bin/env python3
"""Tables of calls 3 and 4 (v18) from their JSON archives (python3 tables34.py, from this folder)."""
import collections
import io
import json
import tarfile


def records(archive):
    with tarfile.open(archive) as t:
        for m in sorted(t.getmembers(), key=lambda m: m.name):
            if m.name.endswith('.json'):
                tag = m.name.split('/')[-1][2:-5]  # e.g. "4,1-r2", "old-r1"
                for r in json.load(io.TextIOWrapper(t.extractfile(m)))['records']:
                    if 'us' in r and not r['variant'].startswith('cublas'):
                        yield tag, r


print('3) per layer, us, round 1 / round 2: def = the default plan of HEAD 47e219a (v17), 4,s = c128t128k128')
print('   forced with s splits; the last columns: the default kernel, the best forced plan and its change')
d = collections.defaultdict(list)
kern = {}
for tag, r in records('3-forced-json.tgz'):
    v = tag.rsplit('-r', 1)[0]
    d[(r['variant'], r['m'], r['layer'], v)].append(r['us'])
    if v == 'def':
        kern[(r['variant'], r['m'], r['layer'])] = r['kernel'].split('_w')[-1]
cols = ['def', '4,1', '4,2', '4,4']
for k in sorted({x[:3] for x in d}):
    mean = {c: sum(d[k + (c,)]) / len(d[k + (c,)]) for c in cols}
    best = min(cols[1:], key=lambda c: mean[c])
    print('%-12s %4d %-8s' % k + ''.join('  %6.2f/%6.2f' % tuple(d[k + (c,)]) for c in cols),
          kern[k], best, '%+.1f%%' % (100 * (mean[best] / mean['def'] - 1)))
print()
print('4) Suite-1 sums, us, round 1 / round 2: old = HEAD 47e219a, new = the committed plan (v18)')
s = collections.defaultdict(lambda: collections.defaultdict(float))
for tag, r in records('4-ab-json.tgz'):
    s[(r['variant'], r['m'])][tag] += r['us']
for k in sorted(s):
    x = s[k]
    o, n = x['old-r1'] + x['old-r2'], x['new-r1'] + x['new-r2']
    print('%-16s %5d  old %6.1f / %6.1f  new %6.1f / %6.1f  %+5.1f%%' % (k + (x['old-r1'], x['old-r2'], x['new-r1'], x['new-r2'], 100 * (n / o - 1))))
