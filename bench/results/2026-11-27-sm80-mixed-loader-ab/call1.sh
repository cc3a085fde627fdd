#!/bin/bash
# Device call 1: build the working tree (B: lowbit CLI + GPU tests), run the sm80_mixed_gemm
# tests and memcheck on the edge tests, then build HEAD (A: ab11/B.patch reversed) into /tmp/abbin.
set -u
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
mkdir -p /tmp/abbin
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli lowbit_gpu_tests > /tmp/bB.log 2>&1 || { tail -30 /tmp/bB.log; exit 1; }
echo "B built in $(( $(date +%s) - t0 )) s"
cp build/lowbit /tmp/abbin/lowbit-B
T=$(find build -name lowbit_gpu_tests -type f | head -1)
t0=$(date +%s)
$T --gtest_filter='sm80_mixed_gemm.*:graph_capture.*:sm80_int8_gemm.*' > $OUT/tests.txt 2>&1; echo "tests rc $? in $(( $(date +%s) - t0 )) s"; tail -4 $OUT/tests.txt
t0=$(date +%s)
compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='sm80_mixed_gemm.n_at_tile_edges:sm80_mixed_gemm.k_at_pipeline_boundaries:sm80_mixed_gemm.small_shared_memory_variants:sm80_mixed_gemm.every_config_and_split_mode' > $OUT/memcheck.txt 2>&1; echo "memcheck rc $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/memcheck.txt
patch -R -p1 < ab11/B.patch > /dev/null
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bA.log 2>&1 || { tail -30 /tmp/bA.log; exit 1; }
cp build/lowbit /tmp/abbin/lowbit-A; echo "A built in $(( $(date +%s) - t0 )) s"
patch -p1 < ab11/B.patch > /dev/null
