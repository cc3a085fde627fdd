#!/usr/bin/env bash
# Session 63, one device call (<= 600 s), time-guarded stages:
#   1. family sweep round 1 (session 62's next-family-sweep.sh: each family pinned with
#      LOWBIT_CUDA_FAMILIES against the default selection, W4 g128 f16, other models' layers,
#      m = 2 / 4 / 8 and 24 / 32 / 48 / 64);
#   2. every t16 / t16n128 / t16n256 plan forced (LOWBIT_SM80_MIXED_PLAN) for 8-bit weights
#      (W8 per-channel f16) at m = 16 on Suite 1's and other models' layers: session 62's
#      m = 9..16 rules are 4-bit only;
#   3. family sweep round 2 if at most 430 s have passed.
# `--no-check` everywhere (correctness is the tests' job). Outputs in $OUT: family-sweep.txt,
# w8plans-m16.txt, timing.txt, runs.tgz.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs"
t0=$SECONDS
mark() { echo "$(( SECONDS - t0 )) s: $*" >> "$OUT/timing.txt"; }
STEPS=build OUT=$OUT bash tools/device-check.sh > /dev/null || { tail -30 "$OUT/build.log"; exit 1; }
rm -f "$OUT/report.md" "$OUT/steps.log"; mark build
others=4608x3584,3584x3584,37888x3584,3584x18944,7168x5120,5120x5120,27648x5120,5120x13824
others=$others,10240x8192,8192x8192,57344x8192,8192x28672,5120x3072,3072x3072,16384x3072,3072x8192
L=build-device/lowbit
bargs=(--kernels '^w4g128_f16$' --no-check --reps 3 --min-replay-ms 25)
family_round() {
  local r=$1 fam
  for fam in default smxx_gemv sm80_mixed_gemm; do
    env LOWBIT_CUDA_FAMILIES=$([ $fam = default ] || echo $fam) \
      $L bench --suite suite1 --m 2,4,8 --shapes $others "${bargs[@]}" > "$OUT/runs/small-$fam-$r.txt" 2>&1
  done
  for fam in default sm80_mixed_gemm sm90_mixed_gemm; do
    env LOWBIT_CUDA_FAMILIES=$([ $fam = default ] || echo $fam) \
      $L bench --suite suite1 --m 24,32,48,64 --shapes $others "${bargs[@]}" > "$OUT/runs/mid-$fam-$r.txt" 2>&1
  done
  mark "family round $r"
}
family_round 1
shapes=6144x4096,4096x4096,28672x4096,4096x14336,$others
OUT=$OUT/runs/w8 LOWBIT=$L tools/dev/env-ab.sh LOWBIT_SM80_MIXED_PLAN \
  "none t16,1 t16,2 t16,4 t16,8 t16n128,1 t16n128,2 t16n128,4 t16n256,1 t16n256,2 t16n256,4" 1 \
  --suite suite1 --m 16 --shapes $shapes --kernels '^w8_f16$' --no-check --reps 3 --min-replay-ms 25 > /dev/null
mark "w8 plans"
[ $(( SECONDS - t0 )) -le 430 ] && family_round 2
for f in "$OUT"/runs/*.txt; do grep -h -E '^w4g128_f16 +n' "$f" | sed "s|^|$(basename "$f" .txt) |"; done \
  | awk '{print $1, $3, $4, $7, $NF}' | sort -k2,2 -k3,3n -k1,1 > "$OUT/family-sweep.txt"
python3 - "$OUT/runs/w8" > "$OUT/w8plans-m16.txt" <<'PY'
import glob, os, re, sys, collections
t = collections.defaultdict(dict)
for f in sorted(glob.glob(os.path.join(sys.argv[1], "ab-*.txt"))):
    v = re.match(r"ab-LOWBIT_SM80_MIXED_PLAN-(.*)-1\.txt", os.path.basename(f)).group(1)
    for line in open(f):
        x = line.split()
        if len(x) > 8 and x[0] == "w8_f16" and x[1].startswith("n"):
            t[x[1]].setdefault(v, []).append((float(x[5]), x[-1]))
for shape, d in t.items():
    base, bplan = min(d.get("none", [(float("inf"), "-")]))
    forced = sorted((min(u for u, _ in r), v, r[0][1]) for v, r in d.items() if v != "none")
    best = forced[0]
    print(f"{shape:14s} default {base:7.2f} {bplan:40s} best {best[0]:7.2f} {best[1]:11s} {best[2]:40s} gain {100 * (base - best[0]) / base:5.1f}%")
    print("    " + "  ".join(f"{v}={u:.2f}" for u, v, _ in sorted(forced, key=lambda z: z[1])))
PY
tar -C "$OUT" -czf "$OUT/runs.tgz" runs build.log && rm -rf "$OUT/runs" "$OUT/build.log"
mark done
cat "$OUT/timing.txt"; cat "$OUT/w8plans-m16.txt"; head -c 6000 "$OUT/family-sweep.txt"
