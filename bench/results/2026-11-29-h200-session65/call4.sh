#!/usr/bin/env bash
# Session 65, fourth device call: smxx_gemv's grid at 128 blocks (256 where the launch runs two
# blocks per SM: gate_up at m <= 2) instead of min(tiles, SMs x blocks per SM) = 132 / 264 on the
# H200 (LOWBIT_GEMV_GRID). Suite 1's tile counts (16-row tiles: 384 / 256 / 1792 / 256) divide
# by 128, so every block keeps the same largest tile count as with 132, and the next call's
# blocks (PDL) need only the first 128 SMs the previous call frees, not the last ones.
# Default / grid 128 alternated, three rounds, per layer (each layer its own knob value).
# Binary: lowbit-wg0 of .deps/probe/probe.tar.xz (f681ce0's tree; smxx_gemv as at HEAD).
# Outputs in $OUT: grid.txt (arm, variant, layer, m, us, kernel), runs.tgz, timing.txt.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/probe
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/probe/probe.tar.xz | tar -C /tmp/probe -xf - lowbit-wg0 || exit 1
L=/tmp/probe/lowbit-wg0
k='^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w8_f16)$'
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --kernels "$k")
one() {  # arm grid_small grid_gate_up_m12
  local arm=$1
  if [ "$arm" = default ]; then
    $L bench "${b[@]}" --m 1,2,4,8 > "$OUT/runs/$arm-$r.txt" 2>&1
  else
    { LOWBIT_GEMV_GRID=128 $L bench "${b[@]}" --m 1,2,4,8 --shapes 6144x4096,4096x4096,4096x14336
      LOWBIT_GEMV_GRID=256 $L bench "${b[@]}" --m 1,2 --shapes 28672x4096
      LOWBIT_GEMV_GRID=128 $L bench "${b[@]}" --m 4,8 --shapes 28672x4096; } > "$OUT/runs/$arm-$r.txt" 2>&1
  fi
}
for r in 1 2 3; do one default; one grid128; mark "round $r"; done
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[48](g128)?(asym)?_b?f16 +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/grid.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
mark done
cat "$OUT/timing.txt"
