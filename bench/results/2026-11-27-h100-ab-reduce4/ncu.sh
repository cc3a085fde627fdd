#!/usr/bin/env bash
set -u
L=$OUT/log.txt
{
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > $OUT/cmake.log 2>&1
ninja -C build-device -j16 tests/lowbit_gpu_tests > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name --format=csv,noheader
T=build-device/tests/lowbit_gpu_tests
for probe in 1024,512,7168,1,4,0,0 1024,512,7168,1,2,0,0 1024,512,7168,2,1,0,0 1024,576,7168,6,4,0,0 16,4096,14336,0,4,0,0 1024,512,7168,1,1,0,0; do
  echo "== probe $probe"
  LOWBIT_SM90_FP8_PROBE=$probe $T --gtest_also_run_disabled_tests --gtest_filter=sm90_fp8_gemm_probe.DISABLED_time 2>&1 | grep "^probe"
  LOWBIT_SM90_FP8_PROBE=$probe timeout 120 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum,sm__cycles_active.avg,dram__bytes.sum,lts__t_bytes.sum --launch-skip 40 --launch-count 4 $T --gtest_also_run_disabled_tests --gtest_filter=sm90_fp8_gemm_probe.DISABLED_time 2>&1 | grep -E "sm90_fp8|gpu__time|cycles_active|dram__bytes|lts__t_bytes" | sed 's/(CUtensorMap.*//' | cut -c1-150
done
} > $L 2>&1
cat $L
