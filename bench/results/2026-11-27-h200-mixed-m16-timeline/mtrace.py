# Per-block steps of an sm80_mixed_gemm trace dump: python3 mtrace.py dump.bin ...
import numpy as np, sys
W=16
def load(f):
    a=np.fromfile(f,dtype=np.uint64); cap=(len(a)-16)//W
    r=a[16:16+cap*W].reshape(cap,W).astype(np.int64)
    r=r[r[:,2]>0]
    tmax=r[:,2].max(); r=r[r[:,2]>tmax-400000]
    r=r[np.argsort(r[:,2])]
    return r
def calls(r):
    xs=r[:,1]; out=[]; s=0
    for i in range(1,len(r)+1):
        if i==len(r) or xs[i]!=xs[s]: out.append(r[s:i]); s=i
    return out
seq0=[('start',2),('param',9),('wait',3),('s0',10),('c0',11),('last',12),('loop',7),('acc',13),('bar1',14),('reads',15),('end',8)]
print("per-block medians of each step (ns); period = median time between consecutive calls' first wait-return")
for f in sys.argv[1:]:
    r=load(f); cs=calls(r); sizes=[len(c) for c in cs]; G=max(set(sizes),key=sizes.count)
    seq=[x for x in seq0 if (r[:,x[1]]>0).all()]
    print("%-26s %6s %5s "%("trace","period","ctas")+" ".join("%s>%s"%(seq[i][0],seq[i+1][0]) for i in range(len(seq)-1))+"  lastend>nextwait  waitspread")
    cl=[c for c in cs if len(c)==G][1:-1]
    if len(cl)<3: print(f,"too few calls",len(cl)); continue
    a=np.concatenate(cl)
    Ws=np.array([c[:,3].min() for c in cl]); per=np.median(np.diff(Ws))
    gaps=np.median([cl[i+1][:,3].min()-cl[i][:,8].max() for i in range(len(cl)-1)])
    spread=np.median([c[:,3].max()-c[:,3].min() for c in cl])
    ds=[np.median(a[:,seq[i+1][1]]-a[:,seq[i][1]]) for i in range(len(seq)-1)]
    print("%-26s %6d %5d "%(f.split('/')[-1].replace('.bin',''),per,G)+" ".join("%*d"%(len(seq[i][0])+len(seq[i+1][0])+1,d) for i,d in enumerate(ds))+"  %16d  %10d"%(gaps,spread))
    print("   (ns rel. first wait-return)  min   p10   p50   p90   max")
    for k,i in seq:
        v=np.concatenate([c[:,i]-c[:,3].min() for c in cl]); mx=np.median([(c[:,i]-c[:,3].min()).max() for c in cl]); mn=np.median([(c[:,i]-c[:,3].min()).min() for c in cl])
        print(f"   {k:6s} {mn:7.0f} {np.percentile(v,10):7.0f} {np.percentile(v,50):7.0f} {np.percentile(v,90):7.0f} {mx:7.0f}")
