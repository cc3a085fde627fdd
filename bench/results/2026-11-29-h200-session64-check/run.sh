#!/usr/bin/env bash
# Session 64's device check, one call: tools/device-check.sh (build, ctest, memcheck on the tests
# of the families whose selection changed, the full lowbit bench with CPU checks), then the
# default selection at m = 5..8 beside both families pinned on the rule's layers (one round).
# Usage on the device: LOWBIT_COMMIT=<sha> OUT=... bash bench/results/2026-11-29-h200-session64-check/run.sh
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
ks=4096x14336,5120x5120,5120x13824,7168x5120,8192x8192,10240x8192,27648x5120,57344x8192,8192x28672
$L bench "${b[@]}" --m 5,6,7,8 --kernels '^(w8_f16|w8g128_f16)$' --shapes $ks 2>&1 \
  | grep -E '^w8(g128)?_f16 +n' | awk '{print "default", $1, $2, $3, $6, $NF}' > "$OUT/m5-8-default.txt"
tail -3 "$OUT/check.log"; grep -E "ctest|memcheck|bench" "$OUT/report.md" | head -8
