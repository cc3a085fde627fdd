import itertools,math
import model
from eval2 import plan
res=[]
for b0 in range(560,781,20):
  for b1 in range(760,1001,20):
    for b2 in range(1200,1501,25):
      for red in (2.0,4.0):
        model.plan=lambda m,n,k,bits,blk,unit,**kw: plan(m,n,k,bits,blk,unit,red,4.0e6,**kw)
        tot,best=model.evaluate([b0,b1,b2],[2000]*3)
        res.append((round(tot,2),b0,b1,b2,red))
res.sort()
for r in res[:15]: print(r)
# robustness: how many grid points reach the minimum
mn=res[0][0]; print('n at min', sum(1 for r in res if r[0]<=mn+0.01), 'of', len(res))
ok=[r for r in res if r[0]<=mn+0.01]
for i,nm in ((1,'b0'),(2,'b1'),(3,'b2'),(4,'red')): print(nm, sorted(set(r[i] for r in ok)))
for b in ((620,800,1300),(640,800,1300),(600,780,1280),(620,780,1250)):
  print(b, [r for r in ok if r[1:4]==b])
