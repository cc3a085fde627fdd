#!/usr/bin/env bash
# Session 70, call 2 (run inline as one device command right after call 1's device check of c035c3b,
# on the same warm machine; written down here as it ran): racecheck and synccheck (the check's second
# step), then sm80_mixed_gemm's t16 rule of d43fe7b as built (act-order W4 g128 f16, m = 4 / 5 on
# down-like layers), then the GEMV's act-order selection at m = 6..8 on small down-like layers,
# default against the GEMV pinned; two rounds.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}; mkdir -p "$OUT/runs"
(OUT="$OUT/check" PREBUILT=build-device LOWBIT_COMMIT=c035c3b STEPS=sanitize SANITIZE_TOOLS="racecheck synccheck" \
  bash tools/device-check.sh > /dev/null 2>&1; tail -4 "$OUT/check/report.md")
L=build-device/lowbit; K='^w4g128act_f16$'
for r in 1 2; do
  timeout 60 $L bench --suite suite1 --shapes 3584x18944,4096x11008,4096x14336,5120x13824 --m 4,5 --kernels "$K" \
    --no-check --reps 3 > "$OUT/runs/lead1-$r.txt" 2>&1
  for fam in default gemv; do
    if [ $fam = gemv ]; then E="LOWBIT_CUDA_FAMILIES=smxx_gemv"; else E=""; fi
    env $E timeout 90 $L bench --suite suite1 --shapes 2048x8192,3072x8192,1536x8960,2048x5632 --m 6,7,8 --kernels "$K" \
      --no-check --reps 3 > "$OUT/runs/sel-$fam-$r.txt" 2>&1
  done
done
for f in "$OUT"/runs/*.txt; do
  grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"
done | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
sort -k3,3 -k4n "$OUT/ab.txt"
