#!/usr/bin/env bash
# Prepared in session 62, not run (no device time left): the same question as plans.sh one step
# out, for the next session. Which family and plan is fastest, per layer of other models, at
# m = 2..64, W4 g128 f16: each family pinned (LOWBIT_CUDA_FAMILIES) with its own heuristic,
# against the default selection. Suite 1's layers were swept before (mixed_gemm.md, gemv.md);
# plans.sh found the m = 16 pick 7-23% off on 9 of 17 other layers.
#   m = 2 / 4 / 8: smxx_gemv against sm80_mixed_gemm (select.cpp's long-k and wide-n rules)
#   m = 24 / 32 / 48 / 64: sm80_mixed_gemm (t32 / t64) against sm90_mixed_gemm (v9's m = 33 bound)
# One build, two rounds; `--no-check`. Then, where a pinned family wins by more than the rounds'
# spread, force its plans (LOWBIT_SM80_MIXED_PLAN / LOWBIT_SM90_MIXED_PLAN) as plans.sh does.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs"
# The project's device build (tools/device-check.sh: build-device, 90a, .deps when carried).
STEPS=build OUT=$OUT bash tools/device-check.sh || exit 1
shapes=4608x3584,3584x3584,37888x3584,3584x18944,7168x5120,5120x5120,27648x5120,5120x13824
shapes=$shapes,10240x8192,8192x8192,57344x8192,8192x28672,5120x3072,3072x3072,16384x3072,3072x8192
L=build-device/lowbit
for r in 1 2; do
  for fam in default smxx_gemv sm80_mixed_gemm; do
    env LOWBIT_CUDA_FAMILIES=$([ $fam = default ] || echo $fam) \
      $L bench --suite suite1 --m 2,4,8 --shapes $shapes --kernels '^w4g128_f16$' --no-check --reps 3 \
      --min-replay-ms 25 > "$OUT/runs/small-$fam-$r.txt" 2>&1
  done
  for fam in default sm80_mixed_gemm sm90_mixed_gemm; do
    env LOWBIT_CUDA_FAMILIES=$([ $fam = default ] || echo $fam) \
      $L bench --suite suite1 --m 24,32,48,64 --shapes $shapes --kernels '^w4g128_f16$' --no-check --reps 3 \
      --min-replay-ms 25 > "$OUT/runs/mid-$fam-$r.txt" 2>&1
  done
done
for f in "$OUT"/runs/*.txt; do grep -h -E '^w4g128_f16 +n' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $3, $4, $7, $NF}' | sort -k2,2 -k3,3n -k1,1 > "$OUT/family-sweep.txt"
tar -C "$OUT" -czf "$OUT/family-runs.tgz" runs && rm -rf "$OUT/runs"
head -c 20000 "$OUT/family-sweep.txt"
