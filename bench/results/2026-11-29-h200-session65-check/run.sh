#!/usr/bin/env bash
# Session 65's device check, one call: tools/device-check.sh (build, ctest, memcheck on the tests
# of the families whose selection changed, the full lowbit bench with CPU checks), then the
# default selection at m = 5 / 6 on call 1's W8 layers (one round, beside call 1's pinned figures).
# Usage on the device: LOWBIT_COMMIT=<sha> OUT=... bash bench/results/2026-11-29-h200-session65-check/run.sh (run as session65/call2.sh)
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
STEPS="build test sanitize bench" SANITIZE_TOOLS=memcheck \
  SANITIZE_FILTER='sm80_mixed_gemm.*:sm90_mixed_gemm.public*:smxx_gemv.public*:graph_capture.*' \
  OUT=$OUT bash tools/device-check.sh > "$OUT/check.log" 2>&1
echo "device-check rc=$?" >> "$OUT/check.log"
L=build-device/lowbit
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25)
ks=7168x5120,8192x8192,6144x4096,10240x8192,5120x5120,16384x3072,7168x7168,8192x5120,7168x8192,8192x6144,9216x5120,7168x4096,8192x4096
$L bench "${b[@]}" --m 5,6 --kernels '^(w8_f16|w8_bf16)$' --shapes $ks 2>&1 \
  | grep -E '^w8_b?f16 +n' | awk '{print "default", $1, $2, $3, $6, $NF}' > "$OUT/m5-default.txt"
tail -3 "$OUT/check.log"; grep -E "ctest|memcheck|bench" "$OUT/report.md" | head -8
