#!/usr/bin/env bash
# The GEMV family's one-call device script (docs/dev/device-rules.md): build if the carried
# binaries do not run, the smxx_gemv tests, compute-sanitizer (memcheck, racecheck,
# synccheck) on a subset, and Suite 1 timings of every GEMV variant at M = 1, 2, 4, 8 plus
# launch / PDL variants. Logs and JSON under $OUT; a short table last.
#
#   tools/dev/gemv-check.sh [tests] [alltests] [bench] [sweep] [profile]   (default: tests bench)
#   GEMV_BUILD=<dir> (default build-gemv)  GEMV_REPS=<n> (default 5)
set -u
MODES=" ${*:-tests bench} "
want() { [[ "$MODES" == *" $1 "* ]]; }
OUT=${OUT:-/tmp/gemv-out}
B=${GEMV_BUILD:-build-gemv}
REPS=${GEMV_REPS:-5}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
log() { echo "== $*"; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

# 1. Binaries: the carried ones, or a build here (16 cores).
if ! "$B/tests/lowbit_gpu_tests" --gtest_list_tests > /dev/null 2>&1 || ! "$B/lowbit" --version > /dev/null 2>&1; then
  log "building in $B (carried binaries did not run)"
  B=build-dev
  cmake -S . -B "$B" -DLOWBIT_CUDA_ARCHITECTURES=90a -DLOWBIT_DEPS_DIR="$PWD/.deps" -DCMAKE_BUILD_TYPE=Release \
    > "$OUT/cmake.log" 2>&1 || { tail -20 "$OUT/cmake.log"; exit 1; }
  cmake --build "$B" -j16 --target lowbit_gpu_tests lowbit_cli > "$OUT/build.log" 2>&1 || { grep -m20 -E "error" "$OUT/build.log"; tail -5 "$OUT/build.log"; exit 1; }
fi

if want tests; then
  log "tests"
  timeout 300 "$B/tests/lowbit_gpu_tests" --gtest_filter='smxx_gemv.*' > "$OUT/tests.log" 2>&1
  echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure|error" "$OUT/tests.log" | head -30
  if want alltests; then
    timeout 300 "$B/tests/lowbit_gpu_tests" > "$OUT/alltests.log" 2>&1
    echo "all gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$OUT/alltests.log" | head -20
  fi
  log "compute-sanitizer"
  SUB='smxx_gemv.edges_bias_f32_out:smxx_gemv.int8_activations:smxx_gemv.graph_capture_replays_bit_exact:smxx_gemv.forced_launches'
  for tool in memcheck racecheck synccheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/lowbit_gpu_tests" \
      --gtest_filter="$SUB" > "$OUT/san_$tool.log" 2>&1
    echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san_$tool.log" | tail -1)"
    SUB='smxx_gemv.forced_launches'   # racecheck / synccheck are slow: the multi-unit test
  done
fi

bench() {  # bench <json> <kernels regex> <m list> [env...]
  local json=$1 kern=$2 ms=$3; shift 3
  env "$@" timeout 600 "$B/lowbit" bench --suite suite1 --m "$ms" --kernels "$kern" --reps "$REPS" --json "$OUT/$json" \
    > "$OUT/${json%.json}.log" 2>&1
  echo "bench $json rc=$?"
}

if want bench; then
  log "bench: every GEMV width through the public API (w4 / w8 forced onto smxx_gemv)"
  bench gemv.json '^(w[0-9]g128(fzp)?_f16|w4g128_a8)$' 1,2,4,8 LOWBIT_CUDA_FAMILIES=smxx_gemv
  bench tiled.json '^(w4g128_f16|w8g128_f16)$' 1,8
fi

if want sweep; then
  # LOWBIT_GEMV_LAUNCH="warps,blocks_per_sm,corr_table" (-1 keeps).
  log "sweep: launch variants (warps, blocks per SM, correction table) and PDL"
  F=LOWBIT_CUDA_FAMILIES=smxx_gemv
  bench nopdl.json '^(w1|w4)g128_f16$' 1 $F LOWBIT_GEMV_PDL=0
  for cfg in 8,1 16,1 4,2 8,2,0; do
    bench "sw_$cfg.json" '^(w1|w4|w8)g128_f16$' 1,8 $F LOWBIT_GEMV_LAUNCH=$cfg
  done
fi

if want profile; then
  log "ncu: warp stall reasons of the w4 g128 GEMV (Suite 1, M=1, first launches)"
  timeout 150 ncu --clock-control none --kernel-name regex:smxx_gemv --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
    env LOWBIT_CUDA_FAMILIES=smxx_gemv "$B/lowbit" bench --suite suite1 --m 1 --kernels '^w4g128_f16$' --quick --no-check \
    > "$OUT/ncu.log" 2>&1
  echo "ncu rc=$?"
  grep -E "smxx_gemv_kernel|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Issued Warp Per Scheduler|No Eligible|Warp Cycles Per Issued|Stall|stall" "$OUT/ncu.log" | sed -E 's/ +/ /g' | cut -c1-150 | head -40
fi

python3 - "$OUT" <<'PY'
import json, sys, glob, os
out = sys.argv[1]
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    name = os.path.basename(f)[:-5]
    try: j = json.load(open(f))
    except Exception as e: print(name, "unreadable", e); continue
    rows = {}
    for r in j.get("records", []):
        if r["variant"].startswith("cublas"): continue
        d = rows.setdefault((r["variant"], r["m"]), {"us": {}, "err": 0.0, "ok": True, "kernel": r.get("kernel", "")})
        if r.get("us") is not None:
            d["us"][r["layer"]] = r["us"]
            c = r.get("check", {})
            d["err"] = max(d["err"], c.get("rel_err") or 0.0)
            d["ok"] = d["ok"] and c.get("passed", True)
        else:
            d["ok"] = False; d["kernel"] = (r.get("state", "") + " " + r.get("note", ""))[:70]
    for (v, m), d in sorted(rows.items()):
        us = d["us"]
        tot = sum(us.values()) if len(us) == 4 else float("nan")
        lay = " ".join("%s%.2f" % (k[0], us[k]) for k in ("qkv", "o", "gate_up", "down") if k in us)
        kern = d["kernel"][:44] if name in ("gemv", "tiled") or not d["ok"] else ""
        print("%-9s %-14s M%d %6.2f | %s | %.0e %s %s" % (name[:9], v, m, tot, lay, d["err"], "ok" if d["ok"] else "FAIL", kern))
PY
cd "$OUT" && tar czf results.tgz *.json *.log 2>/dev/null && rm -f *.json bench*.log gemv.log tiled.log nopdl.log sw_*.log
ls "$OUT"
