#!/usr/bin/env bash
# Session 67, fourth device call: where act-order's extra time on the GEMV goes. Carried in
# .deps/c11a/c11a.tar.xz: lowbit (the working tree: act-order kernels as their own
# instantiations, kPermuted; the plain kernels' SASS byte-identical to abd78b4's) and lowbit-B
# (an experiment, wrong results: the table of packed places not built before the wait, so no perm
# loads and no block barrier there). Act-order W4 g128 f16 Suite 1 at m = 1 / 2 / 4, three
# rounds alternating; then the plain W4 g128 f16 / W8 per-channel f16 on lowbit once (m = 1).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs" /tmp/c11
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
xz -dc .deps/c11a/c11a.tar.xz | tar -C /tmp/c11 -xf - || exit 1
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 1,2,4)
for r in 1 2 3; do
  for arm in A B; do
    bin=/tmp/c11/lowbit; [ $arm = B ] && bin=/tmp/c11/lowbit-B
    timeout 60 $bin bench "${b[@]}" --kernels '^w4g128act_f16$' > "$OUT/runs/act-$arm-$r.txt" 2>&1
  done
done
timeout 60 /tmp/c11/lowbit bench --suite suite1 --no-check --reps 3 --min-replay-ms 25 --m 1 --kernels '^(w4g128_f16|w8_f16)$' > "$OUT/runs/plain-A-1.txt" 2>&1
mark bench
for f in "$OUT"/runs/*.txt; do grep -h -E '^w[0-9a-z_]+ +[a-z0-9_]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/timing.txt"
