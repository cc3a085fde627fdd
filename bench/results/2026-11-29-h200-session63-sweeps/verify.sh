#!/usr/bin/env bash
# Session 63, after the device check in the same call (PREBUILT build-device): the two 4-bit
# m = 17..32 rules in one binary, each changed shape's default (new) plan against its former
# plan forced, two alternating rounds, W4 g128 f16 at m = 24 / 32:
#   t32 splits: LOWBIT_SM80_MIXED_PLAN=t32,1 (the former plan of these six shapes);
#   sm90 first where t32 leaves a lone CTA per SM on long splits: LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
L=build-device/lowbit
a=(--suite suite1 --m 24,32 --kernels '^w4g128_f16$' --no-check --reps 3 --min-replay-ms 25)
t32=3072x3072,3584x3584,4608x3584,5120x3072,8192x8192,8192x28672
fam=4096x14336,5120x13824,10240x8192
{
for r in 1 2; do
  $L bench "${a[@]}" --shapes $t32 | grep -E '^w4g128_f16 +n' | sed "s/^/new-$r /"
  LOWBIT_SM80_MIXED_PLAN=t32,1 $L bench "${a[@]}" --shapes $t32 | grep -E '^w4g128_f16 +n' | sed "s/^/t32s1-$r /"
  $L bench "${a[@]}" --shapes $fam | grep -E '^w4g128_f16 +n' | sed "s/^/new-$r /"
  LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm $L bench "${a[@]}" --shapes $fam | grep -E '^w4g128_f16 +n' | sed "s/^/sm80-$r /"
done
} | awk '{print $1, $3, $4, $7, $NF}' | sort -k2,2 -k3,3n -k1,1 > "$OUT/verify.txt"
cat "$OUT/verify.txt"
