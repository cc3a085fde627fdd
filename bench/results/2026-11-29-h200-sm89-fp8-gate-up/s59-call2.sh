#!/bin/bash
# call 2: build + racecheck/synccheck of HEAD, then the t8-cap A/B (patched, incremental build)
set -u
t0=$(date +%s)
mkdir -p $OUT/chk
OUT=$OUT/chk LOWBIT_COMMIT=8272ebd STEPS="build sanitize" SANITIZE_TOOLS="racecheck synccheck" bash tools/device-check.sh > $OUT/chk/run.log 2>&1
echo "check rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^- (build|compute|overall)" $OUT/chk/report.md
git apply bench/results/2026-11-28-h200-sm89-fp8-one-wave/next-t8-cap.patch 2>/dev/null || patch -p1 < bench/results/2026-11-28-h200-sm89-fp8-one-wave/next-t8-cap.patch > /dev/null || { echo "cap patch failed"; exit 1; }
mkdir -p $OUT/cap
OUT=$OUT/cap timeout $(( 560 - ($(date +%s) - t0) )) bash bench/results/2026-11-28-h200-sm89-fp8-one-wave/next-t8-cap.sh > $OUT/cap/out.txt 2>&1
echo "cap rc $? after $(( $(date +%s) - t0 )) s"; cat $OUT/cap/out.txt | tail -60
