#!/bin/bash
# Device: build the working tree (B), then with ab10/B.patch reversed (A); binaries into ab10/bin.
set -eu
mkdir -p ab10/bin
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bB.log 2>&1 || { tail -30 /tmp/bB.log; exit 1; }
cp build/lowbit ab10/bin/lowbit-B; echo "B built in $(( $(date +%s) - t0 )) s"
patch -R -p1 < ab10/B.patch > /dev/null
t0=$(date +%s); cmake --build build -j16 --target lowbit_cli > /tmp/bA.log 2>&1 || { tail -30 /tmp/bA.log; exit 1; }
cp build/lowbit ab10/bin/lowbit-A; echo "A built in $(( $(date +%s) - t0 )) s"
patch -p1 < ab10/B.patch > /dev/null
