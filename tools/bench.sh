#!/usr/bin/env bash
# Builds lowbit and runs the main job, `lowbit bench` (Suite 1 and Suite 2 of ANCHORS.md on
# the GPU, side by side with cuBLAS/cuBLASLt; the CPU backend on a small suite when no GPU is
# present). Extra arguments go to `lowbit bench` (e.g. --json bench.json, --suite suite1).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
tools/setup.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA="${LOWBIT_CUDA:-AUTO}" \
  ${LOWBIT_CUDA_ARCHITECTURES:+-DLOWBIT_CUDA_ARCHITECTURES="$LOWBIT_CUDA_ARCHITECTURES"}
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target lowbit_cli
"$build/lowbit" bench "$@"
