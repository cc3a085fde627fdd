#!/bin/bash
# For the next session (not run yet). Device call 1: build HEAD (A) and HEAD + each next-*.patch
# of this folder (S = sym wide loop, L = one-block loader, C = consecutive small tiles) with the
# GPU tests; run the sm80 / gemv / graph / int8 GPU tests and memcheck on the edge tests of
# each variant; binaries to /tmp/abbin. ~81 + 3 x (40 + 60 + 16) + 35 s: one 600-s call.
# Run from the repository root, carrying .deps; then next-ab-call2.sh on the warm machine.
set -u
D=bench/results/2026-11-28-sm80-mixed-raw-decode-ab
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt; cat $OUT/gpu.txt
mkdir -p /tmp/abbin
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
TF='sm80_mixed_gemm.*:graph_capture.*:sm80_int8_gemm.*:smxx_gemv.*'
EDGE='sm80_mixed_gemm.n_at_tile_edges:sm80_mixed_gemm.k_at_pipeline_boundaries:sm80_mixed_gemm.small_shared_memory_variants:sm80_mixed_gemm.every_config_and_split_mode'
for v in S L C; do
  case $v in S) P=$D/next-sym-wide-loop.patch ;; L) P=$D/next-loader-one-block.patch ;; C) P=$D/next-consecutive-small-tiles.patch ;; esac
  patch -p1 < $P > /dev/null || { echo "patch $v failed"; exit 1; }
  t0=$(date +%s); cmake --build build -j16 --target lowbit_cli lowbit_gpu_tests > /tmp/b$v.log 2>&1 || { tail -30 /tmp/b$v.log; exit 1; }
  echo "$v built in $(( $(date +%s) - t0 )) s"; cp build/lowbit /tmp/abbin/lowbit-$v
  T=$(find build -name lowbit_gpu_tests -type f | head -1)
  t0=$(date +%s); $T --gtest_filter="$TF" > $OUT/tests-$v.txt 2>&1; echo "$v tests rc $? in $(( $(date +%s) - t0 )) s"; tail -1 $OUT/tests-$v.txt; grep "FAILED " $OUT/tests-$v.txt | head
  compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter="$EDGE" > $OUT/memcheck-$v.txt 2>&1; echo "$v memcheck rc $?"; tail -1 $OUT/memcheck-$v.txt
  patch -R -p1 < $P > /dev/null || { echo "reverse $v failed"; exit 1; }
done
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bA.log 2>&1 || { tail -30 /tmp/bA.log; exit 1; }
cp build/lowbit /tmp/abbin/lowbit-A; echo "A built in $(( $(date +%s) - t0 )) s"; git status --short | head
