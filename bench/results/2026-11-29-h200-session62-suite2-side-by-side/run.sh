#!/usr/bin/env bash
# Session 62, one device call: a fresh 90a build of the tree (kernels as 57ea092), then on one GPU
# in one call: Suite 2 (lowbit fp8_block, cuBLASLt blockwise), DeepGEMM's Suite 2 by the same
# method (tools/dev/deepgemm_suite2.py, carry .deps), and Suite 1 for issue 3 / 4's lines
# (W4 g128 f16 / bf16 and the three fp8 modes with cuBLASLt beside them).
# Usage on the device: OUT=... bash bench/results/2026-11-29-h200-session62-suite2-side-by-side/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
t0=$(date +%s)
log() { echo "== $(( $(date +%s) - t0 ))s $*" | tee -a "$OUT/steps.log"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
log build
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON \
  -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 &&
  cmake --build build-device -j "$(nproc)" >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
L=build-device/lowbit
log "suite2 (lowbit + cuBLASLt)"
$L bench --suite suite2 --json "$OUT/suite2.json" > "$OUT/suite2.txt" 2>&1
log "deepgemm suite2"
python3 tools/dev/deepgemm_suite2.py --deepgemm-tar .deps/deepgemm.tar.xz --lowbit-json "$OUT/suite2.json" \
  --out-json "$OUT/deepgemm-suite2.json" --out-md "$OUT/deepgemm-suite2.md" > "$OUT/deepgemm.log" 2>&1
log "suite2 again (lowbit + cuBLASLt, after DeepGEMM)"
$L bench --suite suite2 --no-check --json "$OUT/suite2-b.json" > "$OUT/suite2-b.txt" 2>&1
log "suite1 issue lines"
$L bench --suite suite1 --m 1,16,64,256,4096 \
  --kernels '^(w4g128_f16|w4g128_bf16|w8_f16|fp8_tensor|fp8_row|fp8_block|cublaslt_fp8_tensor|cublaslt_fp8_block)$' \
  --json "$OUT/suite1.json" > "$OUT/suite1.txt" 2>&1
log done
