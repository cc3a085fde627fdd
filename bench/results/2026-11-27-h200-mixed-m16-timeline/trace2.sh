#!/bin/bash
# Device: trace build of sm80_mixed_gemm with the epilogue knob LOWBIT_MIXED_EPI (0 current, 1 batched
# DSMEM reads, 2 batched + relaxed exit barrier); per-layer traces at m = 16 and Suite-1 sums.
set -u
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/b.log 2>&1 || { tail -30 /tmp/b.log; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
mkdir -p $OUT/t
for e in 0 1 2; do
for shape in 6144x4096 4096x4096 4096x14336; do
  LOWBIT_MIXED_EPI=$e LOWBIT_MIXED_TRACE_FILE=/tmp/w4-$shape-e$e.bin ./build/lowbit bench --shapes $shape --m 16 --kernels '^w4g128_f16$' --no-check --reps 3 > /tmp/t.log 2>&1 || tail -3 /tmp/t.log
done; done
python3 ab10/mtrace.py /tmp/w4-*.bin > $OUT/steps.txt 2>&1
grep -A0 "^w4-\|^trace" $OUT/steps.txt
for r in 1 2; do for e in 0 1 2; do
  LOWBIT_MIXED_EPI=$e ./build/lowbit bench --suite suite1 --m 16 --kernels '^(w4g128_f16|w4g128_bf16|w8_f16)$' --no-check --json /tmp/s$e$r.json > /tmp/s.log 2>&1 || tail -3 /tmp/s.log
  python3 - /tmp/s$e$r.json e$e-r$r >> $OUT/sums.txt <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); tag=sys.argv[2]
per={}
for r in d['records']:
    if r['suite']=='suite1': per.setdefault(r['variant'],[]).append((r['layer'],round(r['us'],2)))
for v,l in sorted(per.items()): print(tag, v, round(sum(x[1] for x in l),2), l)
PY
done; done
sort -k2,2 -k1,1 $OUT/sums.txt
LOWBIT_MIXED_EPI=2 ./build/lowbit bench --suite suite1 --m 9,16,24 --kernels '^(w4g128_f16|w4g128asym_bf16|w8_f16)$' --json /tmp/chk.json > /tmp/chk.log 2>&1; echo "check rc $?"
python3 - <<'PY'
import json
d=json.load(open('/tmp/chk.json'))
recs=[r for r in d['records'] if isinstance(r.get('check'),dict)]
print('checked',len(recs),'max rel err',max(r['check'].get('rel_err',0) for r in recs) if recs else None,
      'not ok',[(r['variant'],r['m'],r['layer']) for r in recs if r['check'].get('passed') is False],
      'kernels',sorted(set(r['kernel'] for r in recs))[:12])
PY
