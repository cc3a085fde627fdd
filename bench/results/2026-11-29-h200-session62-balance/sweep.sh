#!/usr/bin/env bash
# Session 62: does the W4 g128 f16 GEMM at m = 16 / 64 run at the pace of its busiest SM (CTAs
# per SM, a step function of n) or of the GPU's bandwidth (linear in n)? n swept at k = 4096
# around Suite 1's gate_up (t16n128 s1 at m = 16: n / 128 CTAs, two per SM; sm90 c128t64k128 at
# m = 64: n / 128 units) and qkv (t16n128 s4 at m = 16). One build, two rounds.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs"
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON \
  -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 &&
  cmake --build build-device -j "$(nproc)" >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
L=build-device/lowbit
wide=16896x4096,19712x4096,22528x4096,25344x4096,28672x4096,31232x4096,33792x4096
narrow=4352x4096,5120x4096,6144x4096,7168x4096,8448x4096
for r in 1 2; do
  $L bench --suite suite1 --m 16,64 --shapes $wide --kernels '^w4g128_f16$' --no-check > "$OUT/runs/wide-$r.txt" 2>&1
  $L bench --suite suite1 --m 16 --shapes $narrow --kernels '^w4g128_f16$' --no-check > "$OUT/runs/narrow-$r.txt" 2>&1
done
grep -h -E '^w4g128_f16 ' "$OUT"/runs/*.txt | sort -k3,3n -k4,4n > "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/summary.txt"
