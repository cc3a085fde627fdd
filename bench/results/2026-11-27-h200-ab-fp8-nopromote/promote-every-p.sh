#!/usr/bin/env bash
# For the next device session (written in session 43, not yet run): fp8_gemm.md v32's lead.
# Applies promote-every-p.patch, builds HEAD (P = 1: the same SASS) and P = 2 / 4 side by side,
# alternates them twice on Suite 1 per-tensor / row at M = 1024 / 4096 (the kernels it changes:
# the one-wave scaled ones, m128n192 on qkv / gate_up at M = 4096), then the error at long k in
# one split (m128n192 forced). Usage on the device, from the repo root, with .deps carried:
#   OUT=... bash bench/results/2026-11-27-h200-ab-fp8-nopromote/promote-every-p.sh
# (The patch is applied with `git apply` semantics by `patch -p1`; the tree is restored after.)
set -uo pipefail
here=bench/results/2026-11-27-h200-ab-fp8-nopromote
patch -p1 < $here/promote-every-p.patch > "$OUT/patch.log" 2>&1 || { cat "$OUT/patch.log"; exit 1; }
C="cmake -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps"
$C -S . -B build-p1 > "$OUT/cmake.log" 2>&1
$C -S . -B build-p2 -DCMAKE_CUDA_FLAGS=-DLOWBIT_EXP_FP8_PROMOTE_EVERY=2 >> "$OUT/cmake.log" 2>&1
$C -S . -B build-p4 -DCMAKE_CUDA_FLAGS=-DLOWBIT_EXP_FP8_PROMOTE_EVERY=4 >> "$OUT/cmake.log" 2>&1
t0=$(date +%s)
for b in p1 p2 p4; do (ninja -C build-$b -j6 lowbit > "$OUT/build-$b.log" 2>&1 || tail -20 "$OUT/build-$b.log") & done
wait
echo "builds $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
patch -R -p1 < $here/promote-every-p.patch > /dev/null  # restore the tree (the builds are done)
for r in 1 2; do
  for b in p1 p2 p4; do
    build-$b/lowbit bench --suite suite1 --m 1024,4096 --kernels '^fp8_(tensor|row)$' --no-check > "$OUT/s-$b-$r.txt" 2>&1
    echo "== $b round $r"
    grep -E "^fp8_(tensor|row) " "$OUT/s-$b-$r.txt" | awk '{printf "%s %s %s %s %s\n", $1, $2, $3, $6, $NF}' | paste - - - -
    awk '/suite1 summary/{p=1} p && /^(fp8_tensor|fp8_row|cublaslt_fp8_tensor) /' "$OUT/s-$b-$r.txt"
  done
done
for b in p1 p2 p4; do
  LOWBIT_SM90_FP8_CONFIG=3 LOWBIT_SM90_FP8_SPLITS=1 build-$b/lowbit bench --shapes 4096x14336,6144x4096 --m 512 --kernels '^fp8_(tensor|row)$' --json "$OUT/chk-$b.json" > /dev/null 2>&1
  echo "== error, $b"
  python3 -c "
import json
for x in json.load(open('$OUT/chk-$b.json'))['records']:
  c = x.get('check')
  if c and x['variant'].startswith('fp8'): print(x['variant'], x['n'], x['k'], x['m'], x['kernel'], '%.3e' % c['rel_err'], c['passed'])
"
done
# Then, for a kept form: the tests (sm90_fp8_gemm.*) and compute-sanitizer on that build.
cd "$OUT" && tar czf runs.tgz s-*.txt chk-* && rm -f s-*.txt chk-*
