#!/usr/bin/env bash
# Session 61, one device call (H200) from the repository root carrying .deps:
#   bash bench/results/2026-11-29-h200-session61-ab/ab.sh
# 1. build (90a) and the GPU tests the DeviceGuard change touches most (device_info, the
#    sm90 fp8 / int8 run path that now switches devices);
# 2. sm89_fp8_gemm's t8 held to two CTAs per SM in 4 or 8 splits (the rule of session 60 left
#    them uncapped, unmeasured): LOWBIT_SM89_FP8_T8_CAP -1 (the rule) / 2 (every t8 plan),
#    alternated twice, m = 1, small-n long-k shapes (DeepSeek-V3-like) and Suite 1's qkv / o;
# 3. sm90_fp8_gemm block mode on the two Suite 2 shapes nearest the 1.1x-DeepGEMM line
#    (6144 x 4608 x 7168, 6144 x 4096 x 512), every plausible tile forced on this H200
#    (v35 measured that ranking on an H100 only): LOWBIT_SM90_FP8_CONFIG -1 (the plan) / 3
#    m128n192 / 7 m256n128 / 8 m256n128e / 6 m128n144 / 1 m128n128, alternated twice.
set -uo pipefail
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
  -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 && cmake --build build-device -j16 >> "$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
build-device/tests/lowbit_gpu_tests --gtest_filter='device_info.*:sm90_fp8_gemm.*:sm90_int8_gemm.*' --gtest_brief=1 \
  > "$OUT/tests.log" 2>&1
echo "tests rc $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED)" "$OUT/tests.log"
export LOWBIT=build-device/lowbit
OUT="$OUT/cap" bash tools/dev/env-ab.sh LOWBIT_SM89_FP8_T8_CAP "-1 2" 2 --suite suite1 --m 1 \
  --shapes 576x7168,512x7168,1536x7168,2048x7168,7168x2048,6144x4096,4096x4096 \
  --kernels '^(fp8_tensor|w8a8_int8)$' --no-check > /dev/null 2>&1
for f in "$OUT"/cap/*.txt; do echo "== $f"; grep -E "^(fp8_tensor|w8a8_int8) " "$f" | awk '{print $1, $2, $3, $6, $NF}'; done
OUT="$OUT/cfg" bash tools/dev/env-ab.sh LOWBIT_SM90_FP8_CONFIG "-1 3 7 8 6 1" 2 --suite suite2 --m 6144 \
  --shapes 4608x7168,4096x512 --kernels '^fp8_block$' --no-check > /dev/null 2>&1
for f in "$OUT"/cfg/*.txt; do echo "== $f"; grep -E "^(fp8_block|cublaslt_fp8_block) " "$f" | awk '{print $1, $2, $3, $6, $NF}'; done
cd "$OUT" && tar czf logs.tgz build.log tests.log cap cfg && rm -rf build.log cap cfg
