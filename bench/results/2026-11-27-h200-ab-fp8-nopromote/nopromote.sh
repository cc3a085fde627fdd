#!/usr/bin/env bash
# Measurement build (not committed): scaled-mode fp8 kernels (kWaves 1, no stream-K / K pair)
# accumulating every K block in the tensor core (-DLOWBIT_EXP_FP8_NO_PROMOTE) against HEAD's
# per-block promotion; qkv and gate_up at M = 4096 (m128n192), two alternating rounds; then the
# error at k = 14336 in one split (m128n192 forced, m = 512).
set -uo pipefail
C="cmake -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps"
$C -S . -B build-a > "$OUT/cmake-a.log" 2>&1
$C -S . -B build-b -DCMAKE_CUDA_FLAGS=-DLOWBIT_EXP_FP8_NO_PROMOTE > "$OUT/cmake-b.log" 2>&1
t0=$(date +%s)
(ninja -C build-a -j8 lowbit > "$OUT/build-a.log" 2>&1 || tail -20 "$OUT/build-a.log") &
(ninja -C build-b -j8 lowbit > "$OUT/build-b.log" 2>&1 || tail -20 "$OUT/build-b.log") &
wait
echo "builds $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
for r in 1 2; do
  for b in a b; do
    build-$b/lowbit bench --shapes 6144x4096,28672x4096 --m 4096 --kernels '^fp8_(tensor|row)$' --no-check > "$OUT/n-$b-$r.txt" 2>&1
    echo "== build $b round $r"
    grep -E "^(fp8_tensor|fp8_row|cublaslt_fp8_tensor|cublaslt_fp8_row) " "$OUT/n-$b-$r.txt" | awk '{printf "%s %s %s %s\n", $1, $2, $6, $NF}' | paste - - - - 
  done
done
for b in a b; do
  LOWBIT_SM90_FP8_CONFIG=3 LOWBIT_SM90_FP8_SPLITS=1 build-$b/lowbit bench --shapes 4096x14336,6144x4096 --m 512,4096 --kernels '^fp8_(tensor|row)$' --json "$OUT/chk-$b.json" > "$OUT/chk-$b.txt" 2>&1
  echo "== check build $b"
  python3 -c "
import json,sys
d=json.load(open('$OUT/chk-$b.json'))
for x in d['records']:
  c=x.get('check')
  if c and x['variant'].startswith('fp8'): print(x['variant'], x['n'], x['k'], x['m'], x['kernel'], round(x['us'],1), '%.3e' % c['rel_err'], c['passed'])
"
done
cd "$OUT" && tar czf runs.tgz n-*.txt chk-* && rm -f n-*.txt chk-*
