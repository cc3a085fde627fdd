# Mean Suite-1 sums per (variant, m, binary) from summ.py lines "<binary><round> variant m sum ...",
# each binary's rounds and its difference to the first binary named.
import sys, collections
s = collections.defaultdict(list)
for line in open(sys.argv[1]):
    t, v, m, tot = line.split()[:4]
    s[(v, int(m), t[:-1])].append(float(tot))
bins = sys.argv[2:]
mean = lambda x: sum(x) / len(x) if x else float('nan')
for (v, m) in sorted(set((k[0], k[1]) for k in s)):
    base = mean(s[(v, m, bins[0])])
    print("%-16s %3d  " % (v, m) + '  '.join('%s %s' % (b, '/'.join('%.1f' % y for y in s[(v, m, b)])) for b in bins)
          + '  |' + ' '.join(' %s%+.2f' % (b, mean(s[(v, m, b)]) - base) for b in bins[1:]))
