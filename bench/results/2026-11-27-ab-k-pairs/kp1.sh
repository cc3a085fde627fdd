#!/usr/bin/env bash
# device: v30 K pairs: tests, sanitizers, default plans against forced m64n64p (9) / m64n128p (10)
set -u
L=$OUT/log.txt
{
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > $OUT/cmake.log 2>&1
ninja -C build-device -j16 lowbit tests/lowbit_gpu_tests > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name --format=csv,noheader
T=build-device/tests/lowbit_gpu_tests
timeout 150 $T --gtest_filter='sm90_fp8_gemm.*:sm90_int8_gemm.forced_plans' 2>&1 | grep -E "OK|FAILED|PASSED|Failure|error" | head -30
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool $T --gtest_filter='sm90_fp8_gemm.k_pairs' 2>&1 | tail -2
done
B=build-device/lowbit
for r in 1 2; do for c in def 9 10; do
  echo "== round $r config $c"
  if [ $c = def ]; then E=""; else E="LOWBIT_SM90_FP8_CONFIG=$c"; fi
  env $E $B bench --suite suite1 --m 1,16,64 --kernels '^(fp8_tensor|fp8_block)$' --no-check > $OUT/s1-$r-$c.txt 2>&1
  grep -E "^(fp8_tensor|fp8_block) " $OUT/s1-$r-$c.txt | awk '{print $1, $2, $3, $7, $NF}'
  sed -n '/suite1 summary/,/^$/p' $OUT/s1-$r-$c.txt | grep -E "^(fp8_tensor|fp8_block) "
  env $E $B bench --suite suite2 --shapes 512x7168,576x7168,1536x7168 --m 1024 --kernels '^fp8_block$' --no-check > $OUT/s2-$r-$c.txt 2>&1
  grep -E "^fp8_block " $OUT/s2-$r-$c.txt | awk '{print $1, $2, $3, $7, $NF}'
done; done
cd $OUT && tar czf runs.tgz s1-* s2-* && rm -f s1-* s2-*
} > $L 2>&1
cat $L
