#!/usr/bin/env bash
# For the next device session (written in session 45, not yet run): gemv.md's "down balance"
# lead. Suite 1's down (4096 x 14336) at m = 1 / 2 runs one block of 16 warps per SM; k = 14336
# is 56 chunks of 256 columns, so warps 0..7 take 4 chunks of every tile and warps 8..15 take 3
# (smxx_gemv.cuh: warp w takes chunks w, w + warps, ...), and over a block's ~2 tiles (256
# tiles on 132 blocks) the slowest warps run 8 items against a mean of 7. A linear fit of check
# 4c73f34's W4 g128 f16 layers (o 2 items per warp 4.78 us, qkv ~3 items 5.75) gives ~2.8 us
# per call + ~0.95 us per item of a warp, so down's extra item could be up to ~0.9 us of its
# 10.14, if the slowest warp sets the time (and not the SM's bandwidth, shared by the others).
# Launches whose warp count divides 56 give every warp the same items: 14 warps (4 chunks) or
# 7 warps x 2 blocks (8 chunks); 8 x 2 (7 chunks) as well. `LOWBIT_GEMV_LAUNCH=<warps>,<blocks
# per SM>` (smxx_gemv_heuristic.cpp); "default" leaves the rule's choice. v23 had measured 14 /
# 12 / 10 warps slower on w8 g128 (which streams down at ~92% of copy); never on W4 / w2 / w3.
# Usage on the device, from the repo root, with .deps carried:
#   OUT=... bash bench/results/2026-11-27-ab-gemv-down-balance/down-balance.sh
# If a launch wins on down for some widths, the rule is choose_gemv_launch's (a width- and
# chunk-count-aware warp count), then the Suite 1 sums of every width at m = 1, 2, 4, 8.
set -uo pipefail
cmake -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
  -DLOWBIT_DEPS_DIR=$PWD/.deps -S . -B build-s > "$OUT/cmake.log" 2>&1
t0=$(date +%s); ninja -C build-s lowbit > "$OUT/build.log" 2>&1 || tail -20 "$OUT/build.log"
echo "build $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
K='^(w4g128_f16|w4g128_bf16|w2g128_f16|w3g128_f16|w5g128_f16|w8g128_f16|w8_f16|w1g128_f16)$'
LOWBIT=build-s/lowbit OUT=$OUT/ab bash tools/dev/env-ab.sh LOWBIT_GEMV_LAUNCH "default 14,1 7,2 8,2" 2 \
  --shapes 4096x14336 --m 1,2 --kernels "$K" > "$OUT/ab.log" 2>&1
# Per variant, m and launch: us and the kernel (its name carries warps / depth / grid).
for f in "$OUT"/ab/ab-*.txt; do
  v=$(basename "$f" .txt)
  grep -E '^w[0-9]' "$f" | awk -v t="$v" 'NF > 8 {printf "%-34s %-16s %s %s %s\n", t, $1, $3, $6, $NF}'
done | sort -k2,2 -k3,3n -k1,1 | tee "$OUT/down-balance.txt"
