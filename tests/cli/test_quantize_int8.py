#!/usr/bin/env python3
"""`lowbit quantize` and `lowbit inspect` on the int8 W8A8 checkpoint fixtures of
tests/data/int8/ (compressed-tensors conventions, written by the `safetensors` library:
tests/data/int8/make_int8_fixtures.py). Every output is parsed here by hand (not by lowbit)
and checked: the int8 codes copied byte for byte, NAME_scale F32 (n) equal bit for bit to the
fixture's scales (expected.json; a per-tensor scale repeated on every row), the static input
companions copied unchanged, the weight zero point dropped; then `lowbit inspect --verify`.
Malformed fixtures must stop `quantize` with a `lowbit:` line naming the problem, and make
`inspect` exit 1.

usage: test_quantize_int8.py LOWBIT_BINARY SCRATCH_DIR
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np

lowbit, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "int8")
W = "model.layers.0.self_attn.o_proj.weight"
P = W[: -len("weight")]
EXPECTED = json.load(open(os.path.join(DATA, "expected.json")))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def run(*args):
    p = subprocess.run([lowbit, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def tensors_of(path):
    """{name: (dtype, shape, raw bytes)} and the metadata of a safetensors file."""
    with open(path, "rb") as fh:
        blob = fh.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        out[name] = (info["dtype"], info["shape"], blob[8 + n + b:8 + n + e])
    return out, meta


for name, exp in sorted(EXPECTED.items()):
    src = os.path.join(DATA, name + ".safetensors")
    out = os.path.join(scratch, f"int8_{name}.safetensors")
    if os.path.exists(out):
        os.remove(out)
    # The --format applies to float weights only: int8 checkpoint weights are imported.
    rc, so, se = run("quantize", src, out, "--format", "w4g128")
    if not check(rc == 0, f"{name}: quantize exit {rc}: {so} {se}"):
        continue
    check("imported 1 int8 checkpoint tensor(s) without requantizing" in so, f"{name}: summary: {so}")
    check(f"imported ({exp['convention']} convention" in so, f"{name}: convention line: {so}")
    have, _ = tensors_of(src)
    got, meta = tensors_of(out)
    check(meta.get("lowbit.tensor." + W) == "int8", f"{name}: metadata {meta}")
    n, k = exp["n"], exp["k"]
    check(got[W][0] == "I8" and got[W][1] == [n, k] and got[W][2] == have[W][2],
          f"{name}: codes not copied byte for byte")
    dt, shape, raw = got[W + "_scale"]
    scale_bits = np.frombuffer(raw, dtype=np.uint32)
    want = np.array(exp["scale_bits"], dtype=np.uint32)
    if want.size == 1:
        want = np.repeat(want, n)
    check(dt == "F32" and shape == [n] and np.array_equal(scale_bits, want),
          f"{name}: NAME_scale {dt} {shape} differs from the fixture's scales")
    check(W + "_zero_point" not in got, f"{name}: weight zero point should be dropped")
    for comp in (P + "input_scale", P + "input_zero_point"):
        if comp in have:
            check(comp in got and got[comp] == have[comp], f"{name}: {comp} not copied unchanged")
    rc, so, se = run("inspect", out, "--verify", src)
    check(rc == 0 and "every tensor accounted for" in so and "rel_err 0.000e+00" in so,
          f"{name}: inspect --verify: {rc} {so} {se}")
    rc, so, se = run("inspect", src)
    check(rc == 0 and "int8 checkpoint: " + exp["convention"] in so, f"{name}: inspect of the source: {so}")

# Malformed fixtures: quantize stops with the problem named; inspect reports NOT IMPORTABLE.
bad = {
    "asym_weight": "asymmetric int8 weights are not supported",
    "scale_group": "group",
    "scale_negative": "scale",
    "input_zp_range": "[-128, 127]",
    "missing_scale": None,  # no NAME_scale: not an int8 checkpoint weight; I8 is kept as is
}
for name, needle in bad.items():
    src = os.path.join(DATA, name + ".safetensors")
    out = os.path.join(scratch, f"int8_bad_{name}.safetensors")
    rc, so, se = run("quantize", src, out, "--format", "int8")
    if needle is None:
        check("imported" not in so, f"{name}: should not import: {so} {se}")
        continue
    check(rc != 0 and se.strip().startswith("lowbit:") and needle in se,
          f"{name}: quantize should fail naming '{needle}': {rc} {so} {se}")
    rc, so, se = run("inspect", src)
    check(rc == 1 and "NOT IMPORTABLE" in so, f"{name}: inspect should report it: {rc} {so}")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("test_quantize_int8: all checks passed")
