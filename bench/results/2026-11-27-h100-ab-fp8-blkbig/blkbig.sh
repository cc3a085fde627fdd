#!/usr/bin/env bash
# Block mode at large m: the tiles the plan does not rank by block-mode measurements (v33(b) did
# m = 256 only). Suite 1 shapes at M = 1024 / 4096 and Suite 2, each configuration forced
# (LOWBIT_SM90_FP8_CONFIG, plan's splits), against the default plan, two alternating rounds.
# Usage on the device, from the repo root, with .deps carried: OUT=... bash <this file> > $OUT/blkbig.log
# (session 45: run on an H100, blkbig-h100.log).
set -uo pipefail
cmake -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps -S . -B build-s > "$OUT/cmake.log" 2>&1
t0=$(date +%s); ninja -C build-s lowbit > "$OUT/build.log" 2>&1 || tail -20 "$OUT/build.log"; echo "build $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name --format=csv,noheader
S=6144x4096,4096x4096,28672x4096,4096x14336
run() {
  env "$@" build-s/lowbit bench --shapes $S --m 1024,4096 --kernels '^fp8_block$' --no-check > "$OUT/s1.tmp" 2>&1
  grep -E "^fp8_block " "$OUT/s1.tmp" | awk -v t="$*" 'NF>8 {printf "s1 %-28s %s %s %s %s\n", t, $4"x"$5, $3, $6, $NF}'
  env "$@" build-s/lowbit bench --suite suite2 --kernels '^fp8_block$' --no-check > "$OUT/s2.tmp" 2>&1
  grep -E "^fp8_block " "$OUT/s2.tmp" | awk -v t="$*" 'NF>8 {printf "s2 %-28s %s %s %s\n", t, $3"x"$4"x"$5, $6, $NF}'
  awk -v t="$*" '/suite2 summary/{p=1} p && /^fp8_block /{print "s2sum", t, $2}' "$OUT/s2.tmp"
}
for r in 1 2; do
  for c in default 3 7 8 1 6; do
    if [ $c = default ]; then run X=default; else run LOWBIT_SM90_FP8_CONFIG=$c; fi
  done
done
