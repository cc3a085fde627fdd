#!/usr/bin/env bash
# fp8_gemm.md v33: builds the tree (chains of two, one-wave kernels: "a") and with
# -DLOWBIT_EXP_FP8_CHAIN_WAVES=1 (the two-wave m256n128 kernels chained too: "b"), alternates
# them twice on Suite 1 per-tensor / row at M = 1024 / 4096, then the error at long k in one
# split for m128n192 (config 3) and m256n128 (config 7).
set -uo pipefail
C="cmake -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps"
$C -S . -B build-a > "$OUT/cmake.log" 2>&1
$C -S . -B build-b -DCMAKE_CUDA_FLAGS=-DLOWBIT_EXP_FP8_CHAIN_WAVES=1 >> "$OUT/cmake.log" 2>&1
t0=$(date +%s)
for b in a b; do (ninja -C build-$b -j8 lowbit > "$OUT/build-$b.log" 2>&1 || tail -20 "$OUT/build-$b.log") & done
wait
echo "builds $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
for r in 1 2; do
  for b in a b; do
    build-$b/lowbit bench --suite suite1 --m 1024,4096 --kernels '^fp8_(tensor|row)$' --no-check > "$OUT/s-$b-$r.txt" 2>&1
    echo "== $b round $r"
    grep -E "^fp8_(tensor|row) " "$OUT/s-$b-$r.txt" | awk '{printf "%s %s %s %s %s\n", $1, $2, $3, $6, $NF}' | paste - - - -
    awk '/suite1 summary/{p=1} p && /^(fp8_tensor|fp8_row|cublaslt_fp8_tensor) /' "$OUT/s-$b-$r.txt"
  done
done
for b in a b; do for c in 3 7; do
  LOWBIT_SM90_FP8_CONFIG=$c LOWBIT_SM90_FP8_SPLITS=1 build-$b/lowbit bench --shapes 4096x14336,6144x4096 --m 512 --kernels '^fp8_(tensor|row)$' --json "$OUT/chk-$b-$c.json" > /dev/null 2>&1
  echo "== error, $b config $c"
  python3 -c "
import json
for x in json.load(open('$OUT/chk-$b-$c.json'))['records']:
  c = x.get('check')
  if c and x['variant'].startswith('fp8'): print(x['variant'], x['n'], x['k'], x['m'], x['kernel'], '%.3e' % c['rel_err'], c['passed'])
"
done; done
cd "$OUT" && tar czf runs.tgz s-*.txt chk-* && rm -f s-*.txt chk-*
