#!/usr/bin/env python3
"""Tables of this folder from its two JSON archives (python3 tables.py, from this folder)."""
import collections
import io
import json
import tarfile


def records(archive):
    with tarfile.open(archive) as t:
        for m in t.getmembers():
            if m.name.endswith('.json'):
                label = m.name.split('/')[-1][2:].rsplit('-r', 1)[0]
                for r in json.load(io.TextIOWrapper(t.extractfile(m)))['records']:
                    if 'us' in r and not r['variant'].startswith('cublas'):
                        yield label, r


print('1) per layer, us, round 1 / round 2: old = HEAD dd97e1d, def = the new binary\'s default plan (64-column')
print('   stages, weight role split with zero points), 3,s = c128t64k128 forced with s splits')
d = collections.defaultdict(list)
for v, r in sorted(records('1-forced-json.tgz'), key=lambda x: x[0]):
    d[(r['variant'], r['m'], r['layer'], v)].append(r['us'])
cols = ['old', 'def', '3,1', '3,2', '3,4']
print('%-16s %4s %-8s' % ('variant', 'm', 'layer') + ''.join('%15s' % c for c in cols))
for k in sorted({x[:3] for x in d}):
    print('%-16s %4d %-8s' % k + ''.join('  %6.2f/%6.2f' % tuple(d[k + (c,)]) for c in cols))
print()
print('2) Suite-1 sums, us, round 1 / round 2: old = HEAD dd97e1d, new = the committed plan and kernel')
s = collections.defaultdict(lambda: collections.defaultdict(float))
with tarfile.open('2-ab-json.tgz') as t:
    for m in sorted(t.getmembers(), key=lambda m: m.name):
        if not m.name.endswith('.json'):
            continue
        tag = m.name.split('/')[-1][2:-5]
        for r in json.load(io.TextIOWrapper(t.extractfile(m)))['records']:
            if 'us' in r and not r['variant'].startswith('cublas'):
                s[(r['variant'], r['m'])][tag] += r['us']
for k in sorted(s):
    x = s[k]
    o, n = x['old-r1'] + x['old-r2'], x['new-r1'] + x['new-r2']
    print('%-16s %5d  old %6.1f / %6.1f  new %6.1f / %6.1f  %+5.1f%%' % (k + (x['old-r1'], x['old-r2'], x['new-r1'], x['new-r2'], 100 * (n / o - 1))))
