#!/usr/bin/env bash
# K pairs with split-K (lead 2 of session 42): the twins forced at equal split counts against
# the default plans, on Suite 1's down (4096x14336) and gate_up (28672x4096), two rounds.
# Usage (device, after a build in build-device): OUT=... bash ab4/kp-splitk.sh
set -uo pipefail
bin=${LOWBIT:-build-device/lowbit}
mkdir -p "$OUT/kp"
combos=("def" "10:4" "10:2" "9:2" "9:4" "10:1")
for r in 1 2; do
  for c in "${combos[@]}"; do
    if [ "$c" = def ]; then E="LOWBIT_X=1"; else E="LOWBIT_SM90_FP8_CONFIG=${c%%:*} LOWBIT_SM90_FP8_SPLITS=${c##*:}"; fi
    env $E "$bin" bench --shapes 4096x14336,28672x4096 --m 16,32,64,128 \
      --kernels '^fp8_(tensor|block)$' --no-check > "$OUT/kp/$c-$r.txt" 2>&1
    echo "== round $r combo $c"
    grep -E "^fp8_(tensor|block) " "$OUT/kp/$c-$r.txt" | awk '{printf "%s %s %s %s %s\n", $1, $2, $3, $6, $NF}'
  done
done
