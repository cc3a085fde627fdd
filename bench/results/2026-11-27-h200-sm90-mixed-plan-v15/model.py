import math,re,sys
L={'qkv':(6144,4096),'o':(4096,4096),'gate_up':(28672,4096),'down':(4096,14336)}
TOK=[64,128,256]
meas={}
import os
for line in open(os.path.join(os.path.dirname(os.path.abspath(__file__)),'2-plan-sweep.txt')):
    if line.startswith('#'): continue
    f=line.split(); m=int(f[1]); l=f[2]
    rest=line.split('|')[1].split()
    for i in range(0,len(rest),2):
        c,s=re.match(r'c(\d)-s(\d+)',rest[i]).groups(); meas[(m,l,int(c),int(s))]=float(rest[i+1])
def plan(m,n,k,bits,blk,unit,sms=132,splits=(1,2,3,4,5,6,8),reduce_us=2.0):
    kb=k//64; dram=(n*k*bits/8+m*k*2+m*n*2)/4.0e6
    best=None
    for c in range(3):
        tiles=math.ceil(m/TOK[c])*math.ceil(n/128)
        for s in splits:
            if s>min(kb,16): continue
            units=tiles*s; ew=units/sms; capped=ew>=4; w=ew if capped else math.ceil(ew)
            kbu=math.ceil(kb/s)
            sm=w*(kbu*blk[c]+unit[c])/(1400 if capped else 1980)
            sp=reduce_us+m*n*4*s*2/4.0e6 if s>1 else 0
            us=max(dram,sm)+sp
            if best is None or us<best[0]*0.999: best=(us,c,s)
    return best
def evaluate(blk,unit,verbose=False,**kw):
    tot=0;totbest=0;rows=[]
    for m in (33,64,96,128,192,256):
        for l,(n,k) in L.items():
            us,c,s=plan(m,n,k,4,blk,unit,**kw)
            got=meas[(m,l,c,s)]
            b=min((v,cc,ss) for (mm,ll,cc,ss),v in meas.items() if mm==m and ll==l)
            tot+=got; totbest+=b[0]
            rows.append((m,l,c,s,us,got,b))
    if verbose:
        for r in rows: print('m %3d %-8s pick c%d-s%d pred %.1f meas %.2f | best c%d-s%d %.2f %s'%(r[0],r[1],r[2],r[3],r[4],r[5],r[6][1],r[6][2],r[6][0],'' if r[5]<=r[6][0]*1.02 else '<<'))
    return tot,totbest
cur=[530+3.3*t for t in TOK],[2000]*3
if __name__=="__main__": print("current", evaluate(*cur,verbose=True))
