#!/usr/bin/env bash
# Session 62, last call: a second rule, measured before deciding (a measurement build):
# at m = 9..16 (4-bit, sm_90) t16n128 where its plan has at least as many CTAs as t16's and
# t16's puts at most two on an SM (down-like layers: n ~ 3000-3840, k >= 8192, where t16n128
# reaches eight splits in one wave of clusters). Its picks ("none") against the former t16 s4
# forced, two alternating rounds, m = 9 / 12 / 16, W4 g128 f16.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/ab"
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON \
  -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 &&
  cmake --build build-device -j "$(nproc)" --target lowbit >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
OUT=$OUT/ab tools/dev/env-ab.sh LOWBIT_SM80_MIXED_PLAN "none t16,4" 2 --suite suite1 --m 9,12,16 \
  --shapes 3584x18944,3072x8192,3840x16384,3072x16384,3584x8192,4096x14336 --kernels '^w4g128_f16$' \
  --no-check --reps 3 --min-replay-ms 25 > /dev/null
for f in "$OUT"/ab/ab-*.txt; do grep -h -E '^w4g128_f16 +n' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $3, $4, $7, $NF}' | sort -k2,2 -k3,3n -k1,1 > "$OUT/rule-b-ab.txt"
tar -C "$OUT" -czf "$OUT/ab-b.tgz" ab && rm -rf "$OUT/ab"
cat "$OUT/rule-b-ab.txt"
