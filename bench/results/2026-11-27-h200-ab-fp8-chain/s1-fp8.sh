#!/usr/bin/env bash
# Suite 1, fp8 modes and cuBLASLt, every M, with the tree's plans (the block rule at m = 129..256).
set -uo pipefail
cmake -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps -S . -B build-s > "$OUT/cmake.log" 2>&1
t0=$(date +%s); ninja -C build-s lowbit > "$OUT/build.log" 2>&1 || tail -20 "$OUT/build.log"; echo "build $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name --format=csv,noheader
build-s/lowbit bench --suite suite1 --kernels '^(fp8_(tensor|row|block)|cublaslt_fp8_(tensor|row|block))$' --no-check --json "$OUT/s1-fp8.json" > "$OUT/s1-fp8.txt" 2>&1
echo "bench rc $?"
grep -E "^fp8_(tensor|row|block) +\S+ +256 " "$OUT/s1-fp8.txt"
awk '/suite1 summary/{p=1} p' "$OUT/s1-fp8.txt" | head -12
