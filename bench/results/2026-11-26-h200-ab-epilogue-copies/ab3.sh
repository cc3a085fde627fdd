#!/usr/bin/env bash
set -u
L=$OUT/log.txt
{
touch src/cuda/fp8_gemm/sm90_fp8_gemm.cuh
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > $OUT/cmake.log 2>&1
ninja -C build-device -j16 lowbit tests/lowbit_gpu_tests > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cp build-device/lowbit ab/lowbit-B
timeout 200 build-device/tests/lowbit_gpu_tests --gtest_filter='sm90_fp8_gemm.*:sm90_int8_gemm.*' 2>&1 | grep -E "OK|FAILED|PASSED|Failure|rel" | head -30
timeout 150 compute-sanitizer --tool memcheck build-device/tests/lowbit_gpu_tests --gtest_filter='sm90_fp8_gemm.forced_plans:sm90_fp8_gemm.edges:sm90_int8_gemm.*' 2>&1 | tail -3
cp ab/sm90_fp8_gemm.cuh.orig src/cuda/fp8_gemm/sm90_fp8_gemm.cuh
ninja -C build-device -j16 lowbit > $OUT/buildA.log 2>&1 || { tail -30 $OUT/buildA.log; exit 1; }
cp build-device/lowbit ab/lowbit-A
for b in A B; do
  echo "== build $b"
  ab/lowbit-$b bench --suite suite2 --kernels '^fp8_block$' --no-check 2>&1 | grep -E "^fp8_block"
  ab/lowbit-$b bench --suite suite1 --m 1024,4096 --kernels '^(fp8_block|fp8_tensor|w8a8_int8)$' --no-check 2>&1 | grep -E "^(fp8_block|fp8_tensor|w8a8_int8)"
done
echo "== build A again (suite2)"
ab/lowbit-A bench --suite suite2 --kernels '^fp8_block$' --no-check 2>&1 | grep -E "^fp8_block"
} > $L 2>&1
