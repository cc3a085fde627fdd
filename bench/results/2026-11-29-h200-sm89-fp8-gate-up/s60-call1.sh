#!/bin/bash
# session 60 call 1: build HEAD+diff, fp8/int8 GPU tests, the t8-cap sweep over shapes, the rule A/B on Suite 1
set -u
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON -DLOWBIT_CUDA_ARCHITECTURES=90a \
  -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 && cmake --build build-device -j16 >> "$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
el built
build-device/tests/lowbit_gpu_tests --gtest_filter='sm89_fp8_gemm.*:sm80_int8_gemm.*:sm90_fp8_gemm.chosen_by_default:sm90_int8_gemm.*default*:*graph*' --gtest_brief=1 > "$OUT/tests.log" 2>&1
el "tests rc $?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/tests.log" | head
export LOWBIT=build-device/lowbit
OUT="$OUT/sweep" bash tools/dev/env-ab.sh LOWBIT_SM89_FP8_T8_CAP "0 2" 2 --suite suite1 --m 1,2 \
  --shapes 4096x4096,4096x6144,4096x8192,4096x10240,4096x14336,3072x14336,4224x14336,2048x14336,1536x7168 \
  --kernels '^(fp8_tensor|fp8_block|w8a8_int8)$' --no-check > "$OUT/sweep-summary.txt" 2>&1
el "sweep rc $?"
python3 - "$OUT/sweep" <<'PY'
import sys, glob, re, collections
rows = collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] + "/*.txt")):
    v, r = re.search(r"CAP-(\d+)-(\d+)\.txt", f).groups()
    for line in open(f):
        p = line.split()
        if len(p) > 6 and p[0] in ("fp8_tensor", "fp8_block", "w8a8_int8"):
            rows[(p[0], p[3], p[4], p[2])].setdefault(v, []).append((p[5], p[-1]))
for k in sorted(rows):
    print(*k, " | ".join(f"cap{v}: " + " ".join(u for u, _ in rows[k][v]) + " " + rows[k][v][0][1] for v in sorted(rows[k])))
PY
OUT="$OUT/rule" bash tools/dev/env-ab.sh LOWBIT_SM89_FP8_T8_CAP "-1 0" 2 --suite suite1 --m 1,2 \
  --kernels '^(fp8_tensor|fp8_row|fp8_block|w8a8_int8)$' --no-check > "$OUT/rule-summary.txt" 2>&1
el "rule A/B rc $?"; cat "$OUT/rule-summary.txt" | grep -E "^==|^(fp8|w8a8)"
build-device/lowbit bench --suite suite1 --m 1,2,3,4,8 --kernels '^(fp8_tensor|fp8_row|fp8_block|w8a8_int8)$' > "$OUT/check.txt" 2>&1
el "checked bench rc $?"; grep -E "^(fp8|w8a8)" "$OUT/check.txt" | awk '{print $1,$2,$3,$6,$11,$12,$NF}' | grep -E " (down|gate_up) " 
grep -c " ok " "$OUT/check.txt"; grep -ciE " (fail|FAILED) " "$OUT/check.txt"
cd "$OUT" && tar czf logs.tgz build.log sweep rule && rm -rf build.log sweep rule
el done
