#!/usr/bin/env python3
"""Tables of a call's ab.txt (file variant layer M us kernel; file = <part>-<arm>-<round>):
per (part, variant, layer, M) each arm's rounds and kernel, and the change of the second arm's
best round against the first's. Usage: compare.py callN-ab.txt ARM_A ARM_B"""
import collections, sys
rows = [l.split() for l in open(sys.argv[1])]
arm_a, arm_b = sys.argv[2], sys.argv[3]
d = collections.defaultdict(list)
for f, v, l, m, us, k in rows:
    p, arm, r = f.rsplit('-', 2)
    d[(p, v, l, int(m))].append((arm, float(us), k.replace('sm90_mixed_gemm_', '')))
for key in sorted(d, key=lambda x: (x[0], x[1], x[3], x[2])):
    a = d[key]
    ua = [u for arm, u, k in a if arm == arm_a]; ub = [u for arm, u, k in a if arm == arm_b]
    if not ua or not ub: continue
    ka = [k for arm, u, k in a if arm == arm_a][0]; kb = [k for arm, u, k in a if arm == arm_b][0]
    print(f"{key[0]:7s} {key[1]:15s} {key[2]:11s} m={key[3]:4d} {arm_a} {ua} {ka:30s} {arm_b} {ub} {kb:30s} {100 * (min(ub) / min(ua) - 1):+.1f}%")
