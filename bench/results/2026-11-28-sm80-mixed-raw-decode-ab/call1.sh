#!/bin/bash
# Device call 1: build B (the tree: raw decode), C (B + opaque lane_x), D (C + consecutive 8-bit
# t16 copies), A (HEAD) into /tmp/abbin; the sm80 GPU tests on B, C, D, memcheck on the edge
# tests of B and D.
set -u
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
mkdir -p /tmp/abbin
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
TF='sm80_mixed_gemm.*:graph_capture.*:sm80_int8_gemm.*:smxx_gemv.*'
EDGE='sm80_mixed_gemm.n_at_tile_edges:sm80_mixed_gemm.k_at_pipeline_boundaries:sm80_mixed_gemm.small_shared_memory_variants:sm80_mixed_gemm.every_config_and_split_mode'
one() {  # one VARIANT MEMCHECK
  t0=$(date +%s); cmake --build build -j16 --target lowbit_cli lowbit_gpu_tests > /tmp/b$1.log 2>&1 || { tail -30 /tmp/b$1.log; exit 1; }
  echo "$1 built in $(( $(date +%s) - t0 )) s"
  cp build/lowbit /tmp/abbin/lowbit-$1
  T=$(find build -name lowbit_gpu_tests -type f | head -1)
  t0=$(date +%s); $T --gtest_filter="$TF" > $OUT/tests-$1.txt 2>&1; echo "$1 tests rc $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/tests-$1.txt; grep "FAILED " $OUT/tests-$1.txt | head
  if [ "$2" = 1 ]; then
    t0=$(date +%s); compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter="$EDGE" > $OUT/memcheck-$1.txt 2>&1; echo "$1 memcheck rc $? in $(( $(date +%s) - t0 )) s"; tail -1 $OUT/memcheck-$1.txt
  fi
}
one B 1
patch -p1 < ab12/opaque.patch > /dev/null || { echo "opaque patch failed"; exit 1; }
one C 0
patch -p1 < ab12/consec.patch > /dev/null || { echo "consec patch failed"; exit 1; }
one D 1
patch -R -p1 < ab12/consec.patch > /dev/null && patch -R -p1 < ab12/opaque.patch > /dev/null && patch -R -p1 < ab12/B.patch > /dev/null || { echo "reverse failed"; exit 1; }
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bA.log 2>&1 || { tail -30 /tmp/bA.log; exit 1; }
cp build/lowbit /tmp/abbin/lowbit-A; echo "A built in $(( $(date +%s) - t0 )) s"
git status --short | head
ls -la /tmp/abbin
