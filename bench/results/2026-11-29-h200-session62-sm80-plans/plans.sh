#!/usr/bin/env bash
# Session 62: every t16 / t16n128 plan forced (LOWBIT_SM80_MIXED_PLAN) against the heuristic's
# ("none") for W4 g128 f16 at m = 16 on Suite 1's layers and the linear layers of other common
# models (Qwen2.5-7B / 14B / 32B, Llama-3-70B) plus the n = 19712 .. 25344 points of the
# balance sweep. One build; `--no-check`.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT/runs"
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA=ON \
  -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR="$PWD/.deps" > "$OUT/build.log" 2>&1 &&
  cmake --build build-device -j "$(nproc)" >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
shapes=6144x4096,4096x4096,28672x4096,4096x14336,4608x3584,3584x3584,37888x3584,3584x18944
shapes=$shapes,7168x5120,5120x5120,27648x5120,5120x13824,55296x5120,5120x27648
shapes=$shapes,10240x8192,8192x8192,57344x8192,8192x28672,19712x4096,22528x4096,25344x4096
M=${M:-16}
OUT=$OUT/runs tools/dev/env-ab.sh LOWBIT_SM80_MIXED_PLAN \
  "none t16,1 t16,2 t16,4 t16,8 t16n128,1 t16n128,2 t16n128,4 t16n128,8 dflt" 1 \
  --suite suite1 --m $M --shapes $shapes --kernels '^w4g128_f16$' --no-check --reps 3 --min-replay-ms 25 > /dev/null
python3 - "$OUT/runs" > "$OUT/plans-m$M.txt" <<'PY'
import glob, os, re, sys, collections
t = collections.defaultdict(dict)
for f in sorted(glob.glob(os.path.join(sys.argv[1], "ab-*.txt"))):
    v = re.match(r"ab-LOWBIT_SM80_MIXED_PLAN-(.*)-1\.txt", os.path.basename(f)).group(1)
    for line in open(f):
        x = line.split()
        if len(x) > 8 and x[0] == "w4g128_f16" and x[1].startswith("n"):
            key = "none" if v in ("none", "dflt") else v
            t[x[1]].setdefault(key, []).append((float(x[5]), x[-1]))
for shape, d in t.items():
    base = min(u for u, _ in d.get("none", [(float("inf"), "")]))
    bplan = min(d["none"])[1] if "none" in d else "-"
    forced = sorted((min(u for u, _ in r), v, r[0][1]) for v, r in d.items() if v != "none")
    best = forced[0]
    print(f"{shape:14s} default {base:7.2f} {bplan:40s} best {best[0]:7.2f} {best[1]:11s} {best[2]:40s} gain {100 * (base - best[0]) / base:5.1f}%")
    print("    " + "  ".join(f"{v}={u:.2f}" for u, v, _ in sorted(forced, key=lambda z: z[1])))
PY
tar -C "$OUT" -czf "$OUT/runs-m$M.tgz" runs && rm -rf "$OUT/runs"
cat "$OUT/plans-m$M.txt"
