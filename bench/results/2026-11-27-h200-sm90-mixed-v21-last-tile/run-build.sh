#!/usr/bin/env bash
# (session 51, as run, the two folders renamed since) build both patches (applied in the tree) on the device, pack as ab9/bins.tar.xz, run one script
set -uo pipefail
here=$PWD; W=${W:-mixed}
if [ ! -f ab9/bins.tar.xz ]; then
  t0=$(date +%s)
  { cmake -S . -B build-ab -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR=$PWD/.deps \
    && cmake --build build-ab -j16 --target lowbit_cli lowbit_gpu_tests; } > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
  echo "build $(( $(date +%s) - t0 )) s"
  mkdir -p /tmp/pk/new && cp build-ab/lowbit build-ab/tests/lowbit_gpu_tests /tmp/pk/new/ && (cd /tmp/pk && tar cf - new | xz -0 -T16) > ab9/bins.tar.xz
fi
if [ $W = mixed ]; then S=ab9 bash bench/results/2026-11-27-h200-sm90-mixed-v21-last-tile/run-last-tile.sh
else S=ab9 bash bench/results/2026-11-27-h200-sm90-fp8-abox/run-abox.sh; fi
