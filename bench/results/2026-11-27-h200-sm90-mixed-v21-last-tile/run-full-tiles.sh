#!/usr/bin/env bash
# sm90_mixed_gemm v21 at full tiles: 42b9b97 (old) against HEAD (new), W4 / W8 at M = 256, 1024, 4096, three rounds.
set -uo pipefail
here=$PWD; L=$OUT/log.txt
exec > >(tee -a $L) 2>&1
t0=$(date +%s)
cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$here/.deps; }
{ cfg . build-new && cmake --build build-new -j16 --target lowbit_cli; } > $OUT/build-new.log 2>&1 || { tail -30 $OUT/build-new.log; exit 1; }
echo "build new $(( $(date +%s) - t0 )) s"
rm -rf /tmp/old && mkdir -p /tmp/old && xz -dc ab9/old-src.tar.xz | tar x -C /tmp/old
{ cfg /tmp/old /tmp/old/build && cmake --build /tmp/old/build -j16 --target lowbit_cli; } > $OUT/build-old.log 2>&1 || { tail -30 $OUT/build-old.log; exit 1; }
echo "build old $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2"; }
for r in 1 2 3; do for v in old new; do
  B=build-new/lowbit; [ $v = old ] && B=/tmp/old/build/lowbit
  timeout 120 $B bench --suite suite1 --m 256,1024,4096 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(w4g128_f16|w4g128_bf16|w4g128asym_f16|w8_f16)$' --json "$OUT/s1-$v-r$r.json" > /dev/null 2>&1 || echo "fail s1 $v"
  summ $OUT/s1-$v-r$r.json "$v-r$r"
done; done
echo "total $(( $(date +%s) - t0 )) s"
