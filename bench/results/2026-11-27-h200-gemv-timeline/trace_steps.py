# Per-block medians of each step of a GEMV trace dump: python3 trace_steps.py dump.bin ...
# (WORDS=32 adds the two stamps of the last sums, 'sum' and 'st').
import os, numpy as np, sys
here = os.path.dirname(os.path.abspath(__file__))
exec(open(os.path.join(here, "trace_timeline.py")).read().split("for f in sys.argv")[0])
seq=[('start',2),('param',9),('wait',3),('xarr',10),('rest',11),('xst',4),('pre',5),('d1',12),('i1',6),('dL',13),('bar0',14),('bar1',15)]
seq += [('sum',16),('st',17)] if W == 32 else []
seq += [('loop',7),('end',8)]
print("per-block medians of each step (ns); period = median time between consecutive calls' first wait-return")
print("%-24s %6s "%("trace","period")+" ".join("%s>%s"%(seq[i][0],seq[i+1][0]) for i in range(len(seq)-1))+"  lastend>nextwait")
for f in sys.argv[1:]:
    r=load(f); cs=calls(r); sizes=[len(c) for c in cs]; G=max(set(sizes),key=sizes.count)
    cl=[c for c in cs if len(c)==G][1:-1]; a=np.concatenate(cl)
    Ws=np.array([c[:,3].min() for c in cl]); per=np.median(np.diff(Ws))
    gaps=np.median([cl[i+1][:,3].min()-cl[i][:,8].max() for i in range(len(cl)-1)])
    ds=[np.median(a[:,seq[i+1][1]]-a[:,seq[i][1]]) for i in range(len(seq)-1)]
    print("%-24s %6d "%(f.replace('.bin',''),per)+" ".join("%*d"%(len(seq[i][0])+len(seq[i+1][0])+1,d) for i,d in enumerate(ds))+"  %d"%gaps)
