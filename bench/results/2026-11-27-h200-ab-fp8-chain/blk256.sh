#!/usr/bin/env bash
# Block mode at M = 256 (Suite 1 shapes): every forced config x splits 1 / 2, one bench each.
set -uo pipefail
cmake -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps -S . -B build-s > "$OUT/cmake.log" 2>&1
t0=$(date +%s); ninja -C build-s lowbit > "$OUT/build.log" 2>&1 || tail -20 "$OUT/build.log"; echo "build $(( $(date +%s) - t0 )) s"
S=6144x4096,4096x4096,28672x4096,4096x14336
run() { env "$@" build-s/lowbit bench --shapes $S --m 256 --kernels '^fp8_(block|tensor)$' --no-check 2>&1 | grep -E "^fp8_(block|tensor) " | awk -v t="$*" '{printf "%-44s %s %s %s %s\n", t, $1, $4"x"$5, $6, $NF}'; }
run X=default
for c in 0 1 2 3 4 5 6 7 8; do for s in 1 2; do run LOWBIT_SM90_FP8_CONFIG=$c LOWBIT_SM90_FP8_SPLITS=$s; done; done
run X=default2
