#!/usr/bin/env bash
# fp8 param-placement fix: HEAD 42b9b97 (old) against the working tree (new), one call, two builds.
set -uo pipefail
here=$PWD; L=$OUT/log.txt
exec > >(tee -a $L) 2>&1
t0=$(date +%s)
cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$here/.deps; }
{ cfg . build-new && cmake --build build-new -j16 --target lowbit_cli lowbit_gpu_tests; } > $OUT/build-new.log 2>&1 || { tail -30 $OUT/build-new.log; exit 1; }
echo "build new $(( $(date +%s) - t0 )) s"
rm -rf /tmp/old && mkdir -p /tmp/old && xz -dc ab9/old-src.tar.xz | tar x -C /tmp/old
{ cfg /tmp/old /tmp/old/build && cmake --build /tmp/old/build -j16 --target lowbit_cli; } > $OUT/build-old.log 2>&1 || { tail -30 $OUT/build-old.log; exit 1; }
echo "build old $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 150 build-new/tests/lowbit_gpu_tests --gtest_filter='sm90_fp8*:sm90_int8*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -8
summ() { python3 "$here/bench/results/2026-11-27-h200-sm90-mixed-shell/summ.py" "$1" "$2"; }
for r in 1 2; do for v in old new; do
  B=build-new/lowbit; [ $v = old ] && B=/tmp/old/build/lowbit
  timeout 120 $B bench --suite suite1 --m 16,65,256,1024,4096 --no-check --reps 3 --min-replay-ms 30 \
    --kernels '^(fp8_tensor|fp8_row|fp8_block|w8a8_int8|w4g128_f16|w8_f16)$' --json "$OUT/s1-$v-r$r.json" > /dev/null 2>&1 || echo "fail s1 $v"
  summ $OUT/s1-$v-r$r.json "$v-r$r"
  timeout 120 $B bench --suite suite2 --no-check --reps 3 --min-replay-ms 30 --kernels '^fp8_block$' > $OUT/s2-$v-r$r.txt 2>&1 || echo "fail s2 $v"
  grep -E "^fp8_block +[0-9]" $OUT/s2-$v-r$r.txt | sed "s/^/$v-r$r s2 /"
done; done
echo "total $(( $(date +%s) - t0 )) s"
