#!/usr/bin/env bash
# Session 63, fourth device call (the rest of the session's device time, time-guarded):
#   (a) the two 4-bit m = 17..32 rules of 3eba9af at m = 17 and 28 (not measured before), f16
#       and bf16: each changed layer's default against its former plan (sm80_mixed_gemm pinned,
#       and t32 s1 forced where the split rule changed it), one round;
#   (b) W8 per-channel f16 at m = 24 / 32 (sm90_mixed_gemm by default from m = 17): every t32
#       plan forced with sm80_mixed_gemm pinned, against the default, 20 layers;
#   (c) W8 per-channel f16 at m = 2 / 4 / 8: smxx_gemv (default) against sm80_mixed_gemm pinned.
# Outputs in $OUT: final.txt (file, shape, m, us, kernel), timing.txt.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs"
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
STEPS=build OUT=$OUT bash tools/device-check.sh > /dev/null || { tail -30 "$OUT/build.log"; exit 1; }
rm -f "$OUT/report.md" "$OUT/steps.log" "$OUT/logs.tar.gz"; mark build
L=build-device/lowbit
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25)
t32=3072x3072,3584x3584,4608x3584,5120x3072,8192x8192,8192x28672
fam=4096x14336,5120x13824,10240x8192
k4='^w4g128_(f16|bf16)$'
$L bench "${b[@]}" --m 17,28 --kernels "$k4" --shapes $t32,$fam > "$OUT/runs/a-new.txt" 2>&1
LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm LOWBIT_SM80_MIXED_PLAN=t32,1 $L bench "${b[@]}" --m 17,28 --kernels "$k4" \
  --shapes $t32 > "$OUT/runs/a-t32s1.txt" 2>&1
LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm $L bench "${b[@]}" --m 17,28 --kernels "$k4" --shapes $fam > "$OUT/runs/a-sm80.txt" 2>&1
mark "(a)"
all=6144x4096,4096x4096,28672x4096,4096x14336,4608x3584,3584x3584,37888x3584,3584x18944,7168x5120,5120x5120
all=$all,27648x5120,5120x13824,10240x8192,8192x8192,57344x8192,8192x28672,5120x3072,3072x3072,16384x3072,3072x8192
$L bench "${b[@]}" --m 24,32 --kernels '^w8_f16$' --shapes $all > "$OUT/runs/b-default.txt" 2>&1
for p in t32,1 t32,2 t32,4 t32,8; do
  [ $(( SECONDS - t0 )) -le 220 ] || break
  LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm LOWBIT_SM80_MIXED_PLAN=$p $L bench "${b[@]}" --m 24,32 --kernels '^w8_f16$' \
    --shapes $all > "$OUT/runs/b-$p.txt" 2>&1
done
mark "(b)"
if [ $(( SECONDS - t0 )) -le 250 ]; then
  $L bench "${b[@]}" --m 2,4,8 --kernels '^w8_f16$' --shapes $all > "$OUT/runs/c-default.txt" 2>&1
  LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm $L bench "${b[@]}" --m 2,4,8 --kernels '^w8_f16$' --shapes $all > "$OUT/runs/c-sm80.txt" 2>&1
  mark "(c)"
fi
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[48]g?[0-9]*_b?f16 +n' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' | sort -k3,3 -k4,4n -k2,2 -k1,1 > "$OUT/final.txt"
tar -C "$OUT" -czf "$OUT/final-runs.tgz" runs && rm -rf "$OUT/runs"
mark done
cat "$OUT/timing.txt"; grep -E "^a-" "$OUT/final.txt"
