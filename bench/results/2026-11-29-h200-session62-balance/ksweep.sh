#!/usr/bin/env bash
# Session 62, second call: the fixed cost per call of the W4 g128 f16 kernels at m = 16
# (sm80_mixed_gemm) and m = 1 (smxx_gemv), from a k sweep at n = 6144 and n = 28672 (time = fixed +
# per-k-block share), with PDL on (default) and off (LOWBIT_MIXED_GEMM_PDL=0). One build, two rounds.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs"
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON \
  -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 &&
  cmake --build build-device -j "$(nproc)" >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
L=build-device/lowbit
shapes=6144x1024,6144x2048,6144x4096,6144x8192,6144x16384,28672x1024,28672x2048,28672x4096,28672x8192
for r in 1 2; do
  for pdl in 1 0; do
    LOWBIT_MIXED_GEMM_PDL=$pdl $L bench --suite suite1 --m 1,16 --shapes $shapes --kernels '^w4g128_f16$' --no-check \
      > "$OUT/runs/k-pdl$pdl-$r.txt" 2>&1
  done
done
for f in "$OUT"/runs/*.txt; do grep -h -E '^w4g128_f16 +n' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | sort -k4,4n -k3,3 -k1,1 > "$OUT/ksummary.txt"
tar -C "$OUT" -czf "$OUT/kruns.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/ksummary.txt"
