#!/usr/bin/env bash
# For the next device session (written in session 44, not yet run): fp8_gemm.md v34's lead.
# Applies wg-offset.patch and builds the tree (offset 0: the same SASS as HEAD, nvdisasm) and
# offsets of 192 / 384 clocks (-DLOWBIT_EXP_FP8_WG_OFFSET: consumer warpgroup 1 starts that
# long after warpgroup 0, once per CTA; the 14 two-consumer, non-stream-K, non-K-pair fp8
# kernels change, no spills, no C7518), alternates them twice on Suite 1 per-tensor / block at
# M = 1024 / 4096 and Suite 2 (block), then the error at m = 512 on one build. Usage on the
# device, from the repo root, with .deps carried:
#   OUT=... bash bench/results/2026-11-27-ab-fp8-wg-offset/wg-offset.sh
set -uo pipefail
here=bench/results/2026-11-27-ab-fp8-wg-offset
patch -p1 < $here/wg-offset.patch > "$OUT/patch.log" 2>&1 || { cat "$OUT/patch.log"; exit 1; }
C="cmake -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps"
$C -S . -B build-o0 > "$OUT/cmake.log" 2>&1
$C -S . -B build-o192 -DCMAKE_CUDA_FLAGS=-DLOWBIT_EXP_FP8_WG_OFFSET=192 >> "$OUT/cmake.log" 2>&1
$C -S . -B build-o384 -DCMAKE_CUDA_FLAGS=-DLOWBIT_EXP_FP8_WG_OFFSET=384 >> "$OUT/cmake.log" 2>&1
t0=$(date +%s)
for b in o0 o192 o384; do (ninja -C build-$b -j6 lowbit > "$OUT/build-$b.log" 2>&1 || tail -20 "$OUT/build-$b.log") & done
wait
echo "builds $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
patch -R -p1 < $here/wg-offset.patch > /dev/null  # restore the tree (the builds are done)
for r in 1 2; do
  for b in o0 o192 o384; do
    build-$b/lowbit bench --suite suite1 --m 1024,4096 --kernels '^fp8_(tensor|block)$' --no-check > "$OUT/s1-$b-$r.txt" 2>&1
    build-$b/lowbit bench --suite suite2 --kernels '^fp8_block$' --no-check > "$OUT/s2-$b-$r.txt" 2>&1
    echo "== $b round $r"
    awk '/suite1 summary/{p=1} p && /^fp8_(tensor|block) /' "$OUT/s1-$b-$r.txt"
    awk '/suite2 summary/{p=1} p && /^fp8_block /' "$OUT/s2-$b-$r.txt"
  done
done
build-o192/lowbit bench --shapes 4096x14336,6144x4096 --m 512 --kernels '^fp8_(tensor|block)$' > "$OUT/chk-o192.txt" 2>&1
grep -E "^fp8_" "$OUT/chk-o192.txt"
cd "$OUT" && tar czf runs.tgz s1-*.txt s2-*.txt chk-* && rm -f s1-*.txt s2-*.txt
