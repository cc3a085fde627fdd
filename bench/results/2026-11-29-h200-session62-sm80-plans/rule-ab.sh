#!/usr/bin/env bash
# Session 62, call A: the device check's build and ctest of the tree with the t16 rule
# (sm80_mixed_gemm_heuristic.cpp, rule 3), the cluster residency the family sees at m = 16, then
# the rule against the former plan of each changed shape forced through
# LOWBIT_SM80_MIXED_PLAN in the same binary ("none": the heuristic), m = 9 / 12 / 16, W4 g128
# f16, two alternating rounds; last, Suite 1 at m = 9 / 12 / 16 (its plans must not change).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/ab"
STEPS="build test" LOWBIT_COMMIT=${LOWBIT_COMMIT:-unknown} bash tools/device-check.sh || true
L=build-device/lowbit
build-device/tests/lowbit_gpu_tests --gtest_filter='sm80_mixed_gemm.plan_follows_measurements:sm80_mixed_gemm.default_plans_fit_one_wave_of_clusters' \
  > "$OUT/plan-tests.txt" 2>&1
ab() {  # old-plan shapes...
  local old=$1; shift
  local shapes; shapes=$(IFS=,; echo "$*")
  OUT=$OUT/ab/$old tools/dev/env-ab.sh LOWBIT_SM80_MIXED_PLAN "none $old" 2 --suite suite1 --m 9,12,16 \
    --shapes "$shapes" --kernels '^w4g128_f16$' --no-check --reps 3 --min-replay-ms 25 > /dev/null
}
ab t16n128,4 5120x5120 5120x13824 5120x27648
ab t16n128,2 4608x3584 10240x8192
ab t16n128,1 19712x4096 22528x4096 25344x4096
ab t16,2 3584x3584
$L bench --suite suite1 --m 9,12,16 --kernels '^(w4g128_f16|w4g128_bf16|w4g128asym_f16)$' --no-check > "$OUT/suite1-m9-16.txt" 2>&1
python3 - "$OUT/ab" > "$OUT/rule-ab.txt" <<'PY'
import glob, os, re, sys, collections
t = collections.defaultdict(list)
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*", "ab-*.txt"))):
    v, r = re.match(r"ab-LOWBIT_SM80_MIXED_PLAN-(.*)-(\d)\.txt", os.path.basename(f)).groups()
    for line in open(f):
        x = line.split()
        if len(x) > 8 and x[0] == "w4g128_f16" and x[1].startswith("n"):
            t[(x[1], int(x[2]), "rule" if v == "none" else "former")].append((float(x[5]), x[-1]))
keys = sorted({(s, m) for s, m, _ in t}, key=lambda z: (z[0], z[1]))
for s, m in keys:
    a, b = t[(s, m, "former")], t[(s, m, "rule")]
    ma, mb = sum(u for u, _ in a) / len(a), sum(u for u, _ in b) / len(b)
    print(f"{s:12s} m={m:2d} former {', '.join(f'{u:.2f}' for u, _ in a)} {a[0][1]:38s} rule {', '.join(f'{u:.2f}' for u, _ in b)} {b[0][1]:38s} {100 * (mb - ma) / ma:+.1f}%")
PY
tar -C "$OUT" -czf "$OUT/ab.tgz" ab && rm -rf "$OUT/ab"
cat "$OUT/rule-ab.txt"; grep -E 'resident|PASSED|FAILED' "$OUT/plan-tests.txt" | head -40
grep -A6 'suite1 summary' "$OUT/suite1-m9-16.txt"
