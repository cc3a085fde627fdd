#!/usr/bin/env bash
# Session 69, call 4 (after the device check of call 3, on the same warm machine): racecheck and
# synccheck (the device check's second step), then the act-order GEMV's gather in rounds (default
# for 4-bit weights where the copy of every row would change the launch) against the table's
# scatter (LOWBIT_GEMV_ACT_GATHER=0), the same binary, alternated, two rounds.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}; mkdir -p "$OUT/runs" "$OUT/check"
t0=$SECONDS; mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
if [ ! -x build-device/lowbit ]; then  # a fresh machine: build again
  cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
    -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 && cmake --build build-device -j 16 >> "$OUT/build.log" 2>&1
  mark "rebuilt rc=$?"
fi
OUT="$OUT/check" PREBUILT=build-device LOWBIT_COMMIT=${LOWBIT_COMMIT:-unknown} STEPS=sanitize SANITIZE_TOOLS="racecheck synccheck" \
  bash tools/device-check.sh > /dev/null 2>&1
mark race-sync
K='^w4g128act_f16$'
for r in 1 2; do
  LOWBIT_GEMV_ACT_GATHER=0 timeout 120 build-device/lowbit bench --suite suite1 --m 3,4,5,6,7,8 --kernels "$K" --no-check --reps 3 > "$OUT/runs/scatter-$r.txt" 2>&1; mark "scatter $r"
  timeout 120 build-device/lowbit bench --suite suite1 --m 3,4,5,6,7,8 --kernels "$K" --no-check --reps 3 > "$OUT/runs/rounds-$r.txt" 2>&1; mark "rounds $r"
done
timeout 120 build-device/lowbit bench --suite suite1 --m 3,5,7,8 --kernels '^w4g128act_f16$' > "$OUT/runs/checked.txt" 2>&1; mark checked
for f in "$OUT"/runs/*.txt; do
  grep -h -E '^w[0-9a-z_]+ +[a-z0-9_x]+ +[0-9]+ ' "$f" | sed "s|^|$(basename "$f" .txt) |"
done | awk '{print $1, $2, $3, $4, $7, $NF}' > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
mv "$OUT/check/report.md" "$OUT/report-race-sync.md"; mv "$OUT/check/logs.tar.gz" "$OUT/logs-race-sync.tar.gz" 2>/dev/null
rm -rf "$OUT/check"
cat "$OUT/timing.txt"; tail -5 "$OUT/report-race-sync.md"
