#!/usr/bin/env bash
# Session 67, sixth device call: act-order launch shapes on the GEMV (8800b24's lowbit, carried in
# .deps/c13t/c13.tar.xz). Act-order W4 g128 f16 Suite 1 at m = 1 / 2: the default launch against
# one block of 16 warps per SM everywhere (LOWBIT_GEMV_LAUNCH=16,1: o and gate_up run two blocks of
# 8 by default, each building its own table of k entries and reading the whole perm), and against
# clusters of 2 splitting k (LOWBIT_GEMV_KSPLIT=2: each block reads half of perm), two rounds.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c13
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c13t/c13.tar.xz | tar -C /tmp/c13 -xf - || exit 1
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 1,2 --kernels '^w4g128act_f16$')
for r in 1 2; do
  timeout 60 /tmp/c13/lowbit bench "${b[@]}" > "$OUT/runs/act-def-$r.txt" 2>&1
  LOWBIT_GEMV_LAUNCH=16,1 timeout 60 /tmp/c13/lowbit bench "${b[@]}" > "$OUT/runs/act-l16-$r.txt" 2>&1
  LOWBIT_GEMV_KSPLIT=2 timeout 60 /tmp/c13/lowbit bench "${b[@]}" > "$OUT/runs/act-k2-$r.txt" 2>&1
done
mark bench
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[0-9a-z_]+ +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
