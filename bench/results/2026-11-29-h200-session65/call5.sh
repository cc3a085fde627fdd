#!/usr/bin/env bash
# Session 65, fifth device call: what the partial last wave of 128-channel tiles costs
# sm90_mixed_gemm at m = 33 / 64 (Suite 1's gate_up: 224 tiles on 132 SMs, one CTA each, 1.7
# waves). n x 4096 layers from one wave (n = 132 x 128 = 16896) to two (33792), W4 g128 f16 and
# W8 per-channel f16, the default plan (c128t64k128 s1 on all of them), two rounds. If the
# time follows the waves (ceil), a balanced split of the last wave would pay; if it follows the
# tiles, the SMs left idle already speed up the busy ones.
# Binary: lowbit-wg0 of .deps/probe/probe.tar.xz (f681ce0's tree; sm90_mixed_gemm as at HEAD).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/probe
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/probe/probe.tar.xz | tar -C /tmp/probe -xf - lowbit-wg0 || exit 1
L=/tmp/probe/lowbit-wg0
ks=16896x4096,19712x4096,22528x4096,25344x4096,28672x4096,31232x4096,33792x4096
for r in 1 2; do
  $L bench --suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 33,64 --kernels '^(w4g128_f16|w8_f16)$' \
    --shapes $ks > "$OUT/runs/waves-$r.txt" 2>&1
done
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[48](g128)?_f16 +n' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/waves.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/waves.txt"
