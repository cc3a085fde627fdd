# Timeline of a GEMV trace dump (gemv-trace.patch): python3 trace_timeline.py dump.bin ...
# WORDS=32 for the dumps of gemv-trace-reduce-shfl.patch (32-word records).
import os, numpy as np, sys
W = int(os.environ.get("WORDS", "16"))
def load(f):
    a=np.fromfile(f,dtype=np.uint64); cap=(len(a)-16)//W
    r=a[16:16+cap*W].reshape(cap,W).astype(np.int64)
    r=r[r[:,2]>0]
    tmax=r[:,2].max(); r=r[r[:,2]>tmax-200000]   # the last 200 us
    r=r[np.argsort(r[:,2])]
    return r
def calls(r):
    xs=r[:,1]; out=[]; s=0
    for i in range(1,len(r)+1):
        if i==len(r) or xs[i]!=xs[s]: out.append(r[s:i]); s=i
    return out
for f in sys.argv[1:]:
    r=load(f); cs=calls(r)
    sizes=[len(c) for c in cs]; G=max(set(sizes),key=sizes.count)
    cs=[c for c in cs if len(c)==G][1:-1]
    Ws=np.array([c[:,3].min() for c in cs]); per=np.diff(Ws)
    print(f"== {f}: {len(cs)} calls x {G} blocks; period median {np.median(per):.0f} ns")
    keys=[('start',2),('param',9),('wait',3),('xarr',10),('rest',11),('xst',4),('pre',5),('d1',12),('i1',6),('dL',13),('bar0',14),('bar1',15),('loop',7),('end',8)]
    print("   (ns rel. first wait-return)  min   p10   p50   p90   max")
    for k,i in keys:
        v=np.concatenate([c[:,i]-c[:,3].min() for c in cs]); mx=np.median([(c[:,i]-c[:,3].min()).max() for c in cs]); mn=np.median([(c[:,i]-c[:,3].min()).min() for c in cs])
        if k=='xst' and (v<-1e9).any(): continue
        print(f"   {k:6s} {mn:6.0f} {np.percentile(v,10):6.0f} {np.percentile(v,50):6.0f} {np.percentile(v,90):6.0f} {mx:6.0f}")
    st=np.concatenate([c[:,2]-c[:,3].min() for c in cs]); wo=np.concatenate([c[:,3]-c[:,3].min() for c in cs])
    print("   corr(start,wait)=%.2f  x after own wait p50 %d  wait-start p10 %d p50 %d"%(np.corrcoef(st,wo)[0,1], np.median(np.concatenate([c[:,4]-c[:,3] for c in cs])), np.percentile(wo-st,10), np.median(wo-st)))
    gaps=[cs[i+1][:,3].min()-cs[i][:,8].max() for i in range(len(cs)-1)]
    print("   last end N -> first wait N+1: %d ns"%np.median(gaps))
