#!/usr/bin/env bash
# Session 63, second device call: (1) the build of the 8-bit m = 9..16 rule (t16 in up to four
# splits while its clusters stay resident; t16 for t16n256 where it fills its waves better),
# the family's resident-cluster figures printed by the GPU test, the host plan tests;
# (2) A/B of that rule: the default (new plans) against the former plans forced
# (LOWBIT_SM80_MIXED_PLAN), W8 per-channel f16, m = 9 / 12 / 16, two rounds, on the layers
# whose plan changed (and Suite 1's o as a control); (3) every t32 plan forced for W4 g128 f16
# at m = 24 / 32, with sm90_mixed_gemm pinned in the same run (call 1 found sm90 faster on 8 of
# 16 other models' layers there). Outputs in $OUT: tests.txt, w8-ab.txt, t32plans.txt, timing.txt, runs.tgz.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs"
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
STEPS=build OUT=$OUT bash tools/device-check.sh > /dev/null || { tail -30 "$OUT/build.log"; exit 1; }
rm -f "$OUT/report.md" "$OUT/steps.log"; mark build
build-device/tests/lowbit_gpu_tests --gtest_filter='sm80_mixed_gemm.default_plans_fit_one_wave_of_clusters:sm80_mixed_gemm.plan_follows*' \
  > "$OUT/tests.txt" 2>&1
mark tests
L=build-device/lowbit
changed=4608x3584,3584x3584,37888x3584,3584x18944,5120x3072,3072x3072,3072x8192,4096x4096
OUT=$OUT/runs/w8 LOWBIT=$L tools/dev/env-ab.sh LOWBIT_SM80_MIXED_PLAN "none t16,1 t16,2 t16n256,1" 2 \
  --suite suite1 --m 9,12,16 --shapes $changed --kernels '^w8_f16$' --no-check --reps 3 --min-replay-ms 25 > /dev/null
mark "w8 a/b"
others=6144x4096,4096x4096,28672x4096,4096x14336,4608x3584,3584x3584,37888x3584,3584x18944,7168x5120,5120x5120
others=$others,27648x5120,5120x13824,10240x8192,8192x8192,57344x8192,8192x28672,5120x3072,3072x3072,16384x3072,3072x8192
OUT=$OUT/runs/t32 LOWBIT=$L tools/dev/env-ab.sh LOWBIT_SM80_MIXED_PLAN "none t32,1 t32,2 t32,4 t32,8" 1 \
  --suite suite1 --m 24,32 --shapes $others --kernels '^w4g128_f16$' --no-check --reps 3 --min-replay-ms 25 > /dev/null
LOWBIT_CUDA_FAMILIES=sm90_mixed_gemm $L bench --suite suite1 --m 24,32 --shapes $others --kernels '^w4g128_f16$' \
  --no-check --reps 3 --min-replay-ms 25 > "$OUT/runs/t32/sm90-pinned.txt" 2>&1
mark "t32 plans"
python3 - "$OUT/runs" > "$OUT/w8-ab.txt" 2> "$OUT/t32plans.txt" <<'PY'
import glob, os, re, sys, collections
def rows(f, variant):
    for line in open(f):
        x = line.split()
        if len(x) > 8 and x[0] == variant and x[1].startswith("n"):
            yield x[1], int(x[2]), float(x[5]), x[-1]
# (2) per shape and m: default (new rule) per round, forced former plans per round.
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(sys.argv[1], "w8", "ab-*.txt"))):
    v, r = re.match(r"ab-LOWBIT_SM80_MIXED_PLAN-(.*)-(\d)\.txt", os.path.basename(f)).groups()
    for shape, m, us, k in rows(f, "w8_f16"):
        t[(shape, m)][v].append((us, k))
for (shape, m), d in sorted(t.items()):
    print(f"{shape:13s} m={m:2d} " + "  ".join(f"{v}=" + ",".join(f"{u:.2f}" for u, _ in d[v]) for v in d) +
          f"  default plan {d['none'][0][1]}")
# (3) per shape and m: every t32 plan and sm90 pinned.
t = collections.defaultdict(dict)
for f in sorted(glob.glob(os.path.join(sys.argv[1], "t32", "*.txt"))):
    b = os.path.basename(f)
    v = "sm90" if b.startswith("sm90") else re.match(r"ab-LOWBIT_SM80_MIXED_PLAN-(.*)-1\.txt", b).group(1)
    for shape, m, us, k in rows(f, "w4g128_f16"):
        t[(shape, m)][v] = (us, k)
for (shape, m), d in sorted(t.items()):
    best = min((u, v) for v, (u, k) in d.items() if v != "none")
    print(f"{shape:13s} m={m:2d} default {d['none'][0]:7.2f} {d['none'][1]:42s} best {best[1]:7s} {best[0]:7.2f}  " +
          "  ".join(f"{v}={u:.2f}" for v, (u, k) in sorted(d.items()) if v != "none") + f"  sm90 plan {d.get('sm90', (0, '-'))[1]}",
          file=sys.stderr)
PY
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$OUT/runs"
mark done
cat "$OUT/timing.txt"; grep -E "resident|OK|FAILED|PASSED|Failure|Expected|Which" "$OUT/tests.txt" | head -60; cat "$OUT/w8-ab.txt"; cat "$OUT/t32plans.txt"
