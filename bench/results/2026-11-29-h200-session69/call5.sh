#!/usr/bin/env bash
# Session 69, call 5: act-order down-like layers (k >= 2n, n < 7168) at m = 5..7, W4 g128 f16: the
# default selection (select.cpp sends act-order GEMV clusters at m > 5 to sm80_mixed_gemm, a rule
# measured against the table's scatter) against the GEMV pinned (LOWBIT_CUDA_FAMILIES=smxx_gemv),
# which now gathers in rounds there. Built on the device from this tree; two alternating rounds;
# then the pinned GEMV CPU-checked.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}; mkdir -p "$OUT/runs"
t0=$SECONDS; mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
{ cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
    -DLOWBIT_BUILD_TESTS=OFF -DLOWBIT_DEPS_DIR="$PWD/.deps" && cmake --build build-device -j 16 --target lowbit; } > "$OUT/build.log" 2>&1
mark "built rc=$?"
L=build-device/lowbit
S=4096x14336,5120x13824,3584x18944,2048x8192,4096x11008
K='^w4g128act_f16$'
for r in 1 2; do
  timeout 100 $L bench --suite suite1 --shapes $S --m 5,6,7 --kernels "$K" --no-check --reps 3 > "$OUT/runs/default-$r.txt" 2>&1; mark "default $r"
  LOWBIT_CUDA_FAMILIES=smxx_gemv timeout 100 $L bench --suite suite1 --shapes $S --m 5,6,7 --kernels "$K" --no-check --reps 3 > "$OUT/runs/gemv-$r.txt" 2>&1; mark "gemv $r"
done
LOWBIT_CUDA_FAMILIES=smxx_gemv timeout 100 $L bench --suite suite1 --shapes $S --m 6 --kernels "$K" > "$OUT/runs/checked.txt" 2>&1; mark checked
for f in "$OUT"/runs/*.txt; do
  grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"
done | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tail -n 20 "$OUT/build.log" > "$OUT/build-tail.txt"; rm -f "$OUT/build.log"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"; head -40 "$OUT/ab.txt"
