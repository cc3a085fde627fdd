#!/usr/bin/env bash
# Session 68, fifth device call: the act-order sm90_mixed_gemm launch as committed after call 4 (the
# maps kernel before the gather, the GEMM without PDL, its parameter maps where k' = k) against
# 8f4d491's (gather, maps kernel, the GEMM reading the maps' copies always). Carried in
# .deps/c5t/c5.tar.xz: lowbit-old (8f4d491) and lowbit-new (the working tree), 90a, stripped.
# 1. W4 g128 f16 act-order and plain Suite 1 at m = 64 / 256 / 1024, old / new alternated, two rounds;
# 2. act-order Suite 1 CPU-checked with the new binary at m = 33 / 256 (W4 and W8).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c5
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c5t/c5.tar.xz | tar -C /tmp/c5 -xf - || exit 1
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 64,256,1024 --kernels '^w4g128(act)?_f16$')
for r in 1 2; do
  for arm in old new; do
    timeout 100 /tmp/c5/lowbit-$arm bench "${b[@]}" > "$OUT/runs/$arm-$r.txt" 2>&1
  done
done
mark bench
timeout 120 /tmp/c5/lowbit-new bench --suite suite1 --kernels '^w[48]g128act_f16$' --m 33,256 > "$OUT/act-checked.txt" 2>&1
mark checked
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
