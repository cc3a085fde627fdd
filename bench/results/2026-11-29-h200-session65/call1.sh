#!/usr/bin/env bash
# Session 65, first device call. Carries .deps/probe/probe.tar.xz: four binaries built on the
# development machine from f681ce0 + the LOWBIT_EXP_SM90_MIXED_WG_OFFSET probe in
# sm90_mixed_gemm.cuh (lowbit-wg0: the probe off, i.e. f681ce0's kernels; lowbit-wg300 / -wg600:
# consumer warpgroup 1 starts 300 / 600 clocks after consumer 0; lowbit_gpu_tests: probe off).
# 1. the selection tests of f681ce0 (its refactor had not run on a GPU);
# 2. the warpgroup-offset probe: Suite 1 at m = 33 / 48 / 64 / 128, the three binaries alternated, two rounds;
# 3. 8-bit per-channel at m = 5 / 6 where smxx_gemv does not split k: both families pinned, two rounds.
# Outputs in $OUT: gpu.txt, tests.txt, wg.txt, w8m5.txt, runs.tgz, timing.txt.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/probe
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/probe/probe.tar.xz | tar -C /tmp/probe -xf - || exit 1
mark unpacked
/tmp/probe/lowbit_gpu_tests --gtest_filter='smxx_gemv.public_api_selects_gemv:sm90_mixed_gemm.public_api_selection:sm80_mixed_gemm.plan_follows_measurements:sm90_mixed_gemm.*' \
  > "$OUT/tests.txt" 2>&1
tail -3 "$OUT/tests.txt"
mark tests
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25)
for r in 1 2; do
  for v in wg0 wg300 wg600; do
    /tmp/probe/lowbit-$v bench "${b[@]}" --m 33,48,64,128 --kernels '^(w4g128_f16|w4g128_bf16|w8_f16)$' \
      > "$OUT/runs/wg-$v-$r.txt" 2>&1
  done
done
mark wg
ks=7168x5120,8192x8192,6144x4096,10240x8192,5120x5120,16384x3072,7168x7168,8192x5120,7168x8192,8192x6144,9216x5120,7168x4096,8192x4096
for r in 1 2; do
  for fam in smxx_gemv sm80_mixed_gemm; do
    LOWBIT_CUDA_FAMILIES=$fam /tmp/probe/lowbit-wg0 bench "${b[@]}" --m 5,6 --kernels '^(w8_f16|w8_bf16)$' --shapes $ks \
      > "$OUT/runs/w8-$fam-$r.txt" 2>&1
  done
done
mark w8
for f in "$OUT"/runs/wg-*.txt; do grep -h -E '^w[48](g128)?_b?f16 +n' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/wg.txt"
for f in "$OUT"/runs/w8-*.txt; do grep -h -E '^w8_b?f16 +n' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' | sort -k2,2 -k3,3 -k4,4n -k1,1 > "$OUT/w8m5.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
mark done
cat "$OUT/timing.txt"
