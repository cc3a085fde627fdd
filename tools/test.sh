#!/usr/bin/env bash
# Builds lowbit and runs its tests: `tools/test.sh [build-dir]` (default: build).
# Installs missing dependencies first (tools/setup.sh). GPU tests skip with a message when
# no CUDA device is present. Environment: LOWBIT_CUDA=AUTO|ON|OFF (default AUTO),
# LOWBIT_CUDA_ARCHITECTURES (default 80;89;90a), JOBS (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=${JOBS:-$(nproc)}
tools/setup.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA="${LOWBIT_CUDA:-AUTO}" \
  ${LOWBIT_CUDA_ARCHITECTURES:+-DLOWBIT_CUDA_ARCHITECTURES="$LOWBIT_CUDA_ARCHITECTURES"}
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
