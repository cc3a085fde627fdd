#!/usr/bin/env bash
# Session 69, call 6: sm80_mixed_gemm's plan for act-order down-like layers at m = 3..5, where
# select.cpp sends them when the GEMV's cluster launch has fewer than 12 warps (call 5: t8 s1 at
# m = 5, 28.1 us on 3584x18944, against t16 s4's 21.8 at m = 6). sm80_mixed_gemm pinned, its
# default plan against forced t16 s2 / t16 s4 / t8 s2 (LOWBIT_SM80_MIXED_PLAN), W4 g128 f16
# act-order, two alternating rounds. Built on the device from this tree (lowbit only).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}; mkdir -p "$OUT/runs"
t0=$SECONDS; mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
{ cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
    -DLOWBIT_BUILD_TESTS=OFF -DLOWBIT_DEPS_DIR="$PWD/.deps" && cmake --build build-device -j 16 --target lowbit; } > "$OUT/build.log" 2>&1
mark "built rc=$?"
L=build-device/lowbit
S=4096x14336,3584x18944,4096x11008,5120x13824
run() {  # NAME PLAN
  LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm LOWBIT_SM80_MIXED_PLAN=$2 timeout 60 $L bench --suite suite1 --shapes $S --m 3,4,5 \
    --kernels '^w4g128act_f16$' --no-check --reps 3 > "$OUT/runs/$1.txt" 2>&1
  mark "$1"
}
for r in 1 2; do
  run default-$r none
  run t16s2-$r t16,2
  run t16s4-$r t16,4
  run t8s2-$r t8,2
done
for f in "$OUT"/runs/*.txt; do
  grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"
done | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tail -n 5 "$OUT/build.log" > "$OUT/build-tail.txt"; rm -f "$OUT/build.log"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
