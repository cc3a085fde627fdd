#!/usr/bin/env python3
"""`lowbit bench --shapes`: the layers of every suite replaced by the given N x K shapes.

A small run (one shape, two M, one replay, no figures worth keeping) must time only that
shape at those M, name the layer n<N>k<K>, record the shapes in the JSON options, and say
that the ANCHORS.md figures do not apply instead of printing them. Bad entries must give one
"lowbit:" line naming the entry and a non-zero exit code, before any work. Without a GPU the
CPU reference backend runs; with one, every variant this build has (same checks).

usage: test_bench_shapes.py LOWBIT_BINARY SCRATCH_DIR
"""
import json
import os
import subprocess
import sys

lowbit, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


out_json = os.path.join(scratch, "bench_shapes.json")
if os.path.exists(out_json):
    os.remove(out_json)
run = subprocess.run([lowbit, "bench", "--shapes", "256x512", "--m", "1,3", "--reps", "1",
                      "--min-replay-ms", "0", "--quick", "--json", out_json],
                     capture_output=True, text=True, timeout=540)
check(run.returncode == 0, f"bench --shapes exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-2000:]}")
check("layers (--shapes, N x K): 256x512" in run.stdout, "the header does not list the --shapes layers")
check("do not apply and are not shown" in run.stdout, "no note that the ANCHORS.md figures do not apply")
check("Marlin" not in run.stdout and "DeepGEMM" not in run.stdout,
      "ANCHORS.md figures printed beside --shapes results")
if os.path.exists(out_json):
    j = json.load(open(out_json))
    check(j["options"]["shapes"] == ["256x512"], f"JSON options.shapes: {j['options'].get('shapes')}")
    recs = j["records"]
    check(len(recs) > 0, "no records")
    for r in recs:
        if (r["layer"], r["n"], r["k"]) != ("n256k512", 256, 512) or r["m"] not in (1, 3):
            check(False, f"record outside the --shapes layer / --m list: {r['variant']} {r['layer']} "
                         f"m={r['m']} n={r['n']} k={r['k']}")
            break
    check(any(r.get("state") == "ok" for r in recs), "no record ran")
else:
    check(False, "no JSON written")

for spec, needle in [("12", "has no 'x'"), ("0x64", "N outside"), ("64x-1", "K that is not"),
                     ("axb", "N that is not"), ("64x99999999999", "K outside"), ("64x", "K that is not"),
                     ("64x64,64X64", "repeats an earlier shape")]:
    r = subprocess.run([lowbit, "bench", "--shapes", spec, "--m", "1", "--reps", "1"],
                       capture_output=True, text=True, timeout=120)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    ok = (r.returncode != 0 and len(lines) == 1 and lines[0].startswith("lowbit: --shapes: '" + spec.split(",")[-1] + "'")
          and needle in lines[0] and r.stdout.strip() == "")
    check(ok, f"--shapes {spec}: exit {r.returncode}, stderr {r.stderr!r}, stdout {r.stdout[:300]!r}")

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("bench --shapes: the run and 7 refusals behave")
