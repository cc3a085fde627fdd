#!/usr/bin/env bash
# For the next session (not run in session 48): with sm90-mixed-contiguous-w-probe.UNMEASURED.patch
# applied (on f7ddb30 or later), build lowbit (90a), carry it as one xz under a scratch folder
# (e.g. ab9/bins.tar.xz with ab9/summ.py = ../../../ab-tools summ.py of session 47/48), and run this
# from the repository root on the device. LOWBIT_SM90_MIXED_PLAN: 0 the kernel, 3 no decode,
# 4 no wgmma, 5 neither, 6 the weight bytes of each stage read as one contiguous 4 KB (8 KB for
# 8-bit) piece (wrong data, same bytes), 7 = 6 without decode and wgmma. Same splits for all.
set -uo pipefail
here=$PWD; S=${S:-ab9}
mkdir -p /tmp/hc && cd /tmp/hc && xz -dc "$here/$S/bins.tar.xz" | tar xf - && cd "$here"
B=/tmp/hc/lowbit
for r in 1 2; do for v in 0 5 6 7; do
  LOWBIT_SM90_MIXED_PLAN=$v timeout 40 $B bench --suite suite1 --m 64 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w8_f16)$' --json $OUT/p$v-r$r.json > /dev/null 2>&1 || echo "fail $v"
  python3 "$here/$S/summ.py" $OUT 2>/dev/null | grep "^p$v-r$r " | grep -v cublas
done; done
