#!/bin/bash
# Device: the sm80_mixed_gemm plan sweep (W4 g128 f16) at m = 12 / 16 / 24 on the current tree.
set -u
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
t0=$(date +%s); cmake --build build -j16 --target lowbit_gpu_tests > /tmp/b.log 2>&1 || { tail -30 /tmp/b.log; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
T=$(find build -name lowbit_gpu_tests -type f | head -1)
LOWBIT_MIXED_GEMM_BENCH=1 LOWBIT_MIXED_GEMM_BENCH_ONLY=w4g128/f16 LOWBIT_MIXED_GEMM_BENCH_PLANS=1 LOWBIT_MIXED_GEMM_BENCH_M=12,16,24 \
  $T --gtest_also_run_disabled_tests --gtest_filter='sm80_mixed_gemm_bench.DISABLED_suite1' > $OUT/sweep.txt 2>&1; echo "rc $?"
grep "us " $OUT/sweep.txt | sort -k2,2 -k3,3 -k4,4n | awk '{print $2, $3, $4, $6}' | head -150
