#!/usr/bin/env bash
# device: v30 K pairs, second build (even stages, stage ownership by iteration parity)
set -u
L=$OUT/log.txt
{
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > $OUT/cmake.log 2>&1
ninja -C build-device -j16 lowbit tests/lowbit_gpu_tests > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name --format=csv,noheader
T=build-device/tests/lowbit_gpu_tests
timeout 120 $T --gtest_filter='sm90_fp8_gemm.*:sm90_int8_gemm.forced_plans' 2>&1 | grep -E "OK|FAILED|PASSED|Failure|error" | head -30
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --print-limit 3 $T --gtest_filter='sm90_fp8_gemm.k_pairs' > $OUT/san-$tool.txt 2>&1; head -30 $OUT/san-$tool.txt | grep -v "^\[\|^Note\|^Running" | head -14; tail -2 $OUT/san-$tool.txt
done
B=build-device/lowbit
for r in 1 2; do for c in def 9 10; do
  echo "== round $r config $c"
  if [ $c = def ]; then E="LOWBIT_X=1"; else E="LOWBIT_SM90_FP8_CONFIG=$c LOWBIT_SM90_FP8_SPLITS=1"; fi
  env $E $B bench --suite suite1 --m 16,64,128 --kernels '^(fp8_tensor|fp8_block)$' --no-check > $OUT/s1-$r-$c.txt 2>&1
  grep -E "^(fp8_tensor|fp8_block) " $OUT/s1-$r-$c.txt | awk '{printf "%s %s %s %s %s\n", $1, $2, $3, $6, $NF}' | paste - - -
  env $E $B bench --suite suite2 --shapes 512x7168,576x7168,1536x7168 --m 1024 --kernels '^fp8_block$' --no-check > $OUT/s2-$r-$c.txt 2>&1
  grep -E "^fp8_block " $OUT/s2-$r-$c.txt | awk '{printf "%s %s %s %s %s\n", $1, $2, $3, $6, $NF}'
done; done
cd $OUT && tar czf runs.tgz s1-* s2-* san-* && rm -f s1-* s2-* san-*
} > $L 2>&1
cat $L
