#!/usr/bin/env bash
# Session 64, second device call: W8 at m = 5..8 on the layers where smxx_gemv's launch splits k
# over a cluster at some m (a second round for per-channel f16, and per-channel bf16 and g128 f16
# at m = 5..8), smxx_gemv and sm80_mixed_gemm each pinned; then sm80's plans forced on 10240 x 8192
# at m = 5..8 (call 1 put its t16 s1 at 26.1 / 29.5 / 30.2 / 26.4 us at m = 5 / 6 / 7 / 8).
# Outputs in $OUT: ab2.txt (arm, variant, shape, m, us, kernel), timing.txt.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs"
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
STEPS=build OUT=$OUT bash tools/device-check.sh > /dev/null || { tail -30 "$OUT/build.log"; exit 1; }
rm -f "$OUT/report.md" "$OUT/steps.log" "$OUT/logs.tar.gz"; mark build
L=build-device/lowbit
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25)
ks=4096x14336,5120x5120,5120x13824,7168x5120,8192x8192,10240x8192,27648x5120,57344x8192,8192x28672
for fam in smxx_gemv sm80_mixed_gemm; do
  LOWBIT_CUDA_FAMILIES=$fam $L bench "${b[@]}" --m 5,6,7,8 --kernels '^(w8_f16|w8_bf16|w8g128_f16)$' --shapes $ks \
    > "$OUT/runs/$fam.txt" 2>&1
done
mark pinned
for p in t16,1 t16,2 t8,1 t16n256,1; do
  LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm LOWBIT_SM80_MIXED_PLAN=$p $L bench "${b[@]}" --m 5,6,7,8 --kernels '^w8_f16$' \
    --shapes 10240x8192,8192x8192 > "$OUT/runs/plan-$p.txt" 2>&1
done
mark plans
for f in "$OUT"/runs/*.txt; do grep -h -E '^w8(g128)?_b?f16 +n' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' | sort -k2,2 -k3,3 -k4,4n -k1,1 > "$OUT/ab2.txt"
tar -C "$OUT" -czf "$OUT/runs2.tgz" runs && rm -rf "$OUT/runs"
mark done
cat "$OUT/timing.txt"
