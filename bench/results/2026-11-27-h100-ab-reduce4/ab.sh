#!/usr/bin/env bash
# device: v29 A/B: the 4-split sum kernel (B) against HEAD's (A)
set -u
L=$OUT/log.txt
{
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > $OUT/cmake.log 2>&1
ninja -C build-device -j16 lowbit tests/lowbit_gpu_tests > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name --format=csv,noheader
cp build-device/lowbit ab4/lowbit-B
timeout 200 build-device/tests/lowbit_gpu_tests --gtest_filter='sm90_fp8_gemm.*:sm90_int8_gemm.*' 2>&1 | grep -E "OK|FAILED|PASSED|Failure|rel" | head -30
cp ab4/cuh.orig src/cuda/fp8_gemm/sm90_fp8_gemm.cuh
cp ab4/cu.orig src/cuda/fp8_gemm/sm90_fp8_gemm_kernels.cu
ninja -C build-device -j16 lowbit > $OUT/buildA.log 2>&1 || { tail -30 $OUT/buildA.log; exit 1; }
cp build-device/lowbit ab4/lowbit-A
for r in 1 2; do for b in A B; do
  echo "== round $r build $b"
  ab4/lowbit-$b bench --suite suite2 --kernels '^fp8_block$' --no-check > $OUT/s2-$r-$b.txt 2>&1
  grep -E "^fp8_block .* 1024 +(512|576) " $OUT/s2-$r-$b.txt
  sed -n '/suite2 summary/,/^$/p' $OUT/s2-$r-$b.txt | grep "^fp8_block"
  ab4/lowbit-$b bench --suite suite1 --m 16,64 --kernels '^(fp8_block|fp8_tensor|w8a8_int8)$' --no-check > $OUT/s1-$r-$b.txt 2>&1
  grep -E "^(fp8_block|fp8_tensor|w8a8_int8) +down" $OUT/s1-$r-$b.txt
  sed -n '/suite1 summary/,/^$/p' $OUT/s1-$r-$b.txt | grep -E "^(fp8_block|fp8_tensor|w8a8_int8) "
done; done
cd $OUT && tar czf runs.tgz s1-* s2-* && rm -f s1-* s2-*
} > $L 2>&1
cat $L
