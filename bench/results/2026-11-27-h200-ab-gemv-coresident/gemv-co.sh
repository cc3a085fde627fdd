#!/usr/bin/env bash
# (Its in-place sed leaves build-device stale for a later call: docs/dev/device-rules.md.)
# GEMV at m = 1: one block of 8 warps per SM with shared memory sized for two (LOWBIT_GEMV_LAUNCH=8,2
# + LOWBIT_GEMV_GRID=<SMs>), so that the next call's block (PDL) is resident beside it, against the
# default launches; HEAD's ring (2 slots) and a build with 4-slot rings. Two alternating rounds.
# Usage (device, build-device built at HEAD): OUT=... bash ab4/gemv-co.sh
set -uo pipefail
mkdir -p "$OUT/g"
if [ ! -x build-device/lowbit ]; then
  cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > "$OUT/cmake.log" 2>&1
  ninja -C build-device -j16 lowbit > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
fi
cp build-device/lowbit /tmp/lowbit-head
sed -i 's/constexpr int ring_depth(int bits) { return bits == 1 ? 8 : 2; }/constexpr int ring_depth(int bits) { return bits == 1 ? 8 : 4; }/' src/cuda/gemv/smxx_gemv_params.hpp
grep -n "constexpr int ring_depth" src/cuda/gemv/smxx_gemv_params.hpp
t0=$(date +%s); ninja -C build-device -j16 lowbit > "$OUT/build-r4.log" 2>&1 || { tail -20 "$OUT/build-r4.log"; exit 1; }
echo "ring-4 build: $(( $(date +%s) - t0 )) s"
cp build-device/lowbit /tmp/lowbit-r4
sms=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo 132 || echo 132)
for r in 1 2; do
  for b in head r4; do
    for c in def co; do
      if [ $c = def ]; then E="LOWBIT_X=1"; else E="LOWBIT_GEMV_LAUNCH=8,2 LOWBIT_GEMV_GRID=$sms"; fi
      f="$OUT/g/$b-$c-$r.txt"
      env $E /tmp/lowbit-$b bench --suite suite1 --m 1 --kernels '^(w4g128_f16|w4g128_bf16|w8_f16|w2g128_f16)$' --no-check > "$f" 2>&1
      echo "== round $r binary $b launch $c"
      grep -E "^(w4g128_f16|w4g128_bf16|w8_f16|w2g128_f16) " "$f" | awk '{printf "%s %s %s %s %s\n", $1, $2, $3, $6, $NF}'
    done
  done
done
