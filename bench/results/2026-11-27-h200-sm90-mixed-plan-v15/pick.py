import model,sys
from eval2 import plan
b=[float(x) for x in sys.argv[1:4]]
model.plan=lambda m,n,k,bits,blk,unit,**kw: plan(m,n,k,bits,blk,unit,2.0,4.0e6,**kw)
print(model.evaluate(b,[2000]*3,verbose=True))
# full split range, more m
for m in (17,33,40,48,64,80,96,112,128,160,192,224,256,320,384,512,1024,2048,4096):
  print(m, ' '.join('%s:c%d-s%d'%(l,*plan(m,n,k,4,b,[2000]*3,2.0,4.0e6,splits=range(1,17))[1:]) for l,(n,k) in model.L.items()),
        '| old', ' '.join('%s:c%d-s%d'%(l,*plan(m,n,k,4,[741,952.4,1374.8],[2000]*3,2.0,4.0e6,splits=range(1,17))[1:]) for l,(n,k) in model.L.items()))
