#!/usr/bin/env bash
# Session 65, third device call: sm90_fp8_gemm at Suite 1's M = 256 / 1024 / 4096, every
# two-consumer configuration forced (LOWBIT_SM90_FP8_CONFIG: 1 m128n128, 3 m128n192, 4 m128n96,
# 5 m128n112, 6 m128n144, 7 m256n128, 8 m256n128e) against the default plan, per-tensor and block
# mode, two rounds. Block mode at M = 4096 sits at 1.08-1.10x per-tensor and per-tensor at
# 1471-1513 us against the 1500 line; the block-mode tile ranking at large m was last swept on an
# H100 (fp8_gemm.md v35). Binary: lowbit-wg0 of .deps/probe/probe.tar.xz (f681ce0's tree built on
# the development machine; the fp8 code is the same as HEAD's).
# Outputs in $OUT: cfg.txt (arm, variant, layer, m, us, kernel), runs.tgz, timing.txt.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/probe
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/probe/probe.tar.xz | tar -C /tmp/probe -xf - lowbit-wg0 || exit 1
L=/tmp/probe/lowbit-wg0
b=(--suite suite1 --m 256,1024,4096 --kernels '^(fp8_tensor|fp8_block)$' --no-check --reps 3 --min-replay-ms 25)
for r in 1 2; do
  for c in default 1 3 4 5 6 7 8; do
    if [ "$c" = default ]; then $L bench "${b[@]}" > "$OUT/runs/cfg-$c-$r.txt" 2>&1
    else LOWBIT_SM90_FP8_CONFIG=$c $L bench "${b[@]}" > "$OUT/runs/cfg-$c-$r.txt" 2>&1; fi
    mark "cfg $c round $r"
  done
done
for f in "$OUT"/runs/cfg-*.txt; do grep -h -E '^fp8_(tensor|block) +[a-z_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/cfg.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv >> "$OUT/timing.txt"
mark done
cat "$OUT/timing.txt"
