#!/usr/bin/env bash
# Session 64, first device call: a fresh 90a build of the tree with the two 8-bit selection
# rules (select.cpp mixed_first_w8_ksplit, m = 8; sm80_first_short_w8_t32, m = 17..32, with the
# 8-bit t32 split rule of the heuristic), then on one GPU:
#   tests: the selection / plan tests those rules touch;
#   (a) W8 per-channel at m = 5..8 on 20 layers: smxx_gemv and sm80_mixed_gemm each pinned
#       (f16; bf16 at m = 8), and the default at m = 8 (which family the rule picks);
#   (b) W8 at m = 17 / 24 / 32 (per-channel f16 / bf16, g128 f16): the default on the rule's
#       three layers and five controls, sm90_mixed_gemm pinned on the three, two rounds;
#   (c) time left: Suite 2 side by side with DeepGEMM (issue 4's 1.1x line).
# Outputs in $OUT: tests.txt, a.txt / b.txt (arm, variant, shape, m, us, kernel), timing.txt.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs"
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
STEPS=build OUT=$OUT bash tools/device-check.sh > /dev/null || { tail -30 "$OUT/build.log"; exit 1; }
rm -f "$OUT/report.md" "$OUT/steps.log" "$OUT/logs.tar.gz"; mark build
build-device/tests/lowbit_gpu_tests --gtest_filter='smxx_gemv.public_api_selects_gemv:sm90_mixed_gemm.public_api_selection:sm80_mixed_gemm.plan_follows_measurements:sm80_mixed_gemm.default_plans_fit_one_wave_of_clusters:sm90_mixed_gemm.plan_follows_measurements' \
  > "$OUT/tests.txt" 2>&1; mark "tests rc=$?"
L=build-device/lowbit
b=(--suite suite1 --no-check --reps 3 --min-replay-ms 25)
all=6144x4096,4096x4096,28672x4096,4096x14336,4608x3584,3584x3584,37888x3584,3584x18944,7168x5120,5120x5120
all=$all,27648x5120,5120x13824,10240x8192,8192x8192,57344x8192,8192x28672,5120x3072,3072x3072,16384x3072,3072x8192
ks=4096x14336,3584x18944,7168x5120,27648x5120,5120x13824,10240x8192,8192x8192,57344x8192,8192x28672,3072x8192
LOWBIT_CUDA_FAMILIES=smxx_gemv $L bench "${b[@]}" --m 5,6,7,8 --kernels '^w8_f16$' --shapes $all > "$OUT/runs/a-gemv.txt" 2>&1
LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm $L bench "${b[@]}" --m 5,6,7,8 --kernels '^w8_f16$' --shapes $all > "$OUT/runs/a-sm80.txt" 2>&1
LOWBIT_CUDA_FAMILIES=smxx_gemv $L bench "${b[@]}" --m 8 --kernels '^w8_bf16$' --shapes $ks > "$OUT/runs/a-gemv-bf16.txt" 2>&1
LOWBIT_CUDA_FAMILIES=sm80_mixed_gemm $L bench "${b[@]}" --m 8 --kernels '^w8_bf16$' --shapes $ks > "$OUT/runs/a-sm80-bf16.txt" 2>&1
$L bench "${b[@]}" --m 8 --kernels '^w8_(f16|bf16)$' --shapes $all > "$OUT/runs/a-default.txt" 2>&1
mark "(a)"
three=3072x3072,3584x3584,4096x4096
ctl=3072x8192,4608x3584,6144x4096,4096x14336,5120x3072
w8='^(w8_f16|w8_bf16|w8g128_f16)$'
for r in 1 2; do
  $L bench "${b[@]}" --m 17,24,32 --kernels "$w8" --shapes $three,$ctl > "$OUT/runs/b-default-$r.txt" 2>&1
  LOWBIT_CUDA_FAMILIES=sm90_mixed_gemm $L bench "${b[@]}" --m 17,24,32 --kernels "$w8" --shapes $three > "$OUT/runs/b-sm90-$r.txt" 2>&1
done
mark "(b)"
for f in "$OUT"/runs/*.txt; do grep -h -E '^w8(g128)?_b?f16 +n' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $2, $3, $4, $7, $NF}' | sort -k2,2 -k3,3 -k4,4n -k1,1 > "$OUT/ab.txt"
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
if [ $(( SECONDS - t0 )) -le 380 ]; then
  $L bench --suite suite2 --kernels '^(fp8_block|cublaslt_fp8_block)$' --json "$OUT/suite2.json" > "$OUT/suite2.txt" 2>&1
  mark suite2
  python3 tools/dev/deepgemm_suite2.py --deepgemm-tar .deps/deepgemm.tar.xz --lowbit-json "$OUT/suite2.json" \
    --out-json "$OUT/deepgemm-suite2.json" --out-md "$OUT/deepgemm-suite2.md" > "$OUT/deepgemm.log" 2>&1
  mark "deepgemm rc=$?"
  tar -C "$OUT" -czf "$OUT/suite2.tgz" suite2.json suite2.txt deepgemm-suite2.json deepgemm.log && \
    rm -f "$OUT/suite2.json" "$OUT/suite2.txt" "$OUT/deepgemm-suite2.json" "$OUT/deepgemm.log"
fi
mark done
cat "$OUT/timing.txt"; grep -E "PASSED|FAILED" "$OUT/tests.txt"
