#!/usr/bin/env python3
"""`lowbit quantize` and `lowbit inspect` on the fp8 checkpoint fixtures of tests/data/fp8/
(written by the `safetensors` library: tools/dev/make_fp8_fixtures.py). Every output is read
back independently of lowbit (its header parsed here, codes decoded by the
fp8 definitions written out below) and checked
against the fixture's `expected` tensor bit for bit, then by `lowbit inspect --verify`; the
malformed fixtures must stop the command with one `lowbit:` line naming the problem.

usage: test_quantize_fp8.py LOWBIT_BINARY SCRATCH_DIR
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np
from safetensors import safe_open

lowbit, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "fp8")
P = "model.layers.0.mlp.up_proj"
W = P + ".weight"
failures = []

NP = {"F32": np.float32, "F16": np.float16, "I32": np.int32, "I8": np.int8, "U8": np.uint8,
      "I64": np.int64}


def fp8_table(exp_bits, man_bits, bias, fn):
    """fp32 value of every code of an OCP fp8 type (fn: e4m3fn, no infinities, S.1111.111
    is NaN; else IEEE-like e5m2). Written from the OCP definition, not from lowbit."""
    out = np.empty(256, dtype=np.float32)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> man_bits) & ((1 << exp_bits) - 1)
        m = code & ((1 << man_bits) - 1)
        if fn and e == (1 << exp_bits) - 1 and m == (1 << man_bits) - 1:
            v = float("nan")
        elif not fn and e == (1 << exp_bits) - 1:
            v = float("inf") if m == 0 else float("nan")
        elif e == 0:
            v = m / (1 << man_bits) * 2.0 ** (1 - bias)
        else:
            v = (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
        out[code] = sign * v
    return out


FP8 = {"F8_E4M3": fp8_table(4, 3, 7, True), "F8_E5M2": fp8_table(5, 2, 15, False)}


def decode(dtype, raw):
    if dtype in FP8:
        return FP8[dtype][np.frombuffer(raw, dtype=np.uint8)]
    if dtype == "BF16":  # the high half of an fp32
        return (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
    return np.frombuffer(raw, dtype=NP[dtype])


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def run(*args):
    p = subprocess.run([lowbit, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def fixture(name):
    return os.path.join(DATA, name + ".safetensors")


def read(path):
    """{name: (dtype, shape, raw bytes, numpy array)} and the metadata, parsed by hand."""
    with open(path, "rb") as fh:
        blob = fh.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        raw = blob[8 + n + b:8 + n + e]
        arr = decode(info["dtype"], raw).reshape(info["shape"])
        out[name] = (info["dtype"], info["shape"], raw, arr)
    return out, meta


def dequant_lowbit(tensors, name):
    """Independent decode of checkpoint.hpp's fp8 form: NAME codes x NAME_scale grid, fp32."""
    codes = tensors[name][3].astype(np.float32)
    s = tensors[name + "_scale"][3].astype(np.float32)
    n, k = codes.shape
    if s.ndim == 0:
        grid = np.full((n, k), s, dtype=np.float32)
    elif s.shape == (n, 1):
        grid = np.repeat(s, k, axis=1)
    else:  # (ceil(n/128), ceil(k/128)); also (n, ceil(k/128)) would be 1x128, not written here
        grid = np.repeat(np.repeat(s, 128, axis=0), 128, axis=1)[:n, :k]
    return codes * grid


def same_bits(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def quantize(name, fmt, *extra, tag=None):
    out = os.path.join(scratch, f"fp8_{name}.{tag or fmt}.safetensors")
    if os.path.exists(out):
        os.remove(out)
    rc, so, se = run("quantize", fixture(name), out, "--format", fmt, *extra)
    return out, rc, so, se


def verify(out, src, what):
    rc, so, se = run("inspect", out, "--verify", src)
    check(rc == 0 and "every tensor accounted for" in so, f"{what}: inspect --verify: {rc} {so} {se}")
    return so


def line_of(stdout, name):
    """The line about tensor `name` (quantize prints it first, inspect indented)."""
    return next((l.strip() for l in stdout.splitlines() if l.lstrip().startswith(name + " ")), "")


# -----------------------------------------------------------------------------------------
# Each convention, imported in its own scaling
# -----------------------------------------------------------------------------------------
native = [  # fixture, --format, convention, lowbit scale shape, has input_scale
    ("llama_fp8_tensor", "fp8-tensor", "per-tensor", [], True),
    ("tensor_scale1", "fp8-tensor", "per-tensor", [], True),
    ("channel_fp8", "fp8-row", "per-channel", [200, 1], False),
    ("channel_1d", "fp8-row", "per-channel", [48, 1], True),
    ("deepseek_block", "fp8-128x128", "deepseek-128x128", [2, 2], False),
]
for name, fmt, conv, scale_shape, has_input in native:
    src, _ = read(fixture(name))
    out, rc, so, se = quantize(name, fmt)
    if not check(rc == 0, f"{name} {fmt}: exit {rc}: {se.strip()}"):
        continue
    line = line_of(so, W)
    check(f"imported ({conv} convention" in line and "codes unchanged" in line,
          f"{name}: line for {W}: {line!r}")
    check("imported 1 fp8 checkpoint tensor(s) without requantizing" in so, f"{name}: summary: {so}")
    t, meta = read(out)
    check(meta.get("lowbit.tensor." + W) == fmt, f"{name}: declared {meta.get('lowbit.tensor.' + W)}")
    check(meta.get("format") == "pt", f"{name}: input metadata lost: {meta}")
    check(t[W][0] == "F8_E4M3" and t[W][2] == src[W][2], f"{name}: codes not copied bit for bit")
    check(t[W + "_scale"][0] == "F32" and t[W + "_scale"][1] == scale_shape,
          f"{name}: scale {t[W + '_scale'][:2]}, expected F32 {scale_shape}")
    check(W + "_scale_inv" not in t, f"{name}: the consumed _scale_inv was copied too")
    check(same_bits(dequant_lowbit(t, W), src["expected"][3]),
          f"{name}: decoded output differs from `expected`")
    if has_input:
        i = P + ".input_scale"
        check(i in t and t[i][:3] == src[i][:3], f"{name}: input_scale not copied unchanged")
    check(set(t) == (set(src) - {W + "_scale_inv"}) | {W + "_scale"} | (
        {"lm_head.weight_scale"} if "lm_head.weight" in src else set()),
        f"{name}: output tensors {sorted(t)}")
    # The reference library reads the result too.
    with safe_open(out, "np") as f:
        check(W in f.keys() and f.metadata().get("lowbit.format_version") == "1",
              f"{name}: safe_open: {list(f.keys())}")
    so = verify(out, fixture(name), name)
    check("rel_err 0.000e+00" in line_of(so, W),
          f"{name}: verify error of {W} is not 0: {so}")
    print(f"{name} --format {fmt}: imported, decoded bit-exact")

# The float weight next to the fp8 one is quantized exactly as before.
out, rc, so, se = quantize("llama_fp8_tensor", "fp8-tensor", tag="lm_head")
t, meta = read(out)
check(meta.get("lowbit.tensor.lm_head.weight") == "fp8-tensor" and "rel_err" in so
      and line_of(so, "lm_head.weight").split()[3] == "fp8-tensor",
      f"lm_head not quantized from float: {line_of(so, 'lm_head.weight')!r}")

# -----------------------------------------------------------------------------------------
# --format asking for something else: moved exactly, or kept, per tensor, with the reason
# -----------------------------------------------------------------------------------------
mismatch = [  # fixture, --format, declared format of W, words of its line
    ("llama_fp8_tensor", "fp8-128x128", "fp8-128x128", "scales moved exactly"),
    ("llama_fp8_tensor", "fp8-row", "fp8-row", "scales moved exactly"),
    ("deepseek_block", "fp8-tensor", "fp8-128x128", "kept fp8-128x128"),
    ("deepseek_block", "fp8-row", "fp8-128x128", "would need requantizing"),
    ("channel_fp8", "fp8-128x128", "fp8-row", "kept fp8-row"),
    ("llama_fp8_tensor", "w4g128", "fp8-tensor", "is for float weights"),
    ("deepseek_block", "int8", "fp8-128x128", "never requantized"),
    ("channel_1d", "fp8-row-e5m2", "fp8-row", "kept e4m3 codes"),
]
for name, fmt, declared, words in mismatch:
    src, _ = read(fixture(name))
    out, rc, so, se = quantize(name, fmt)
    if not check(rc == 0, f"{name} {fmt}: exit {rc}: {se.strip()}"):
        continue
    t, meta = read(out)
    line = line_of(so, W)
    check(meta.get("lowbit.tensor." + W) == declared, f"{name} {fmt}: declared {meta.get('lowbit.tensor.' + W)}")
    check(words in line, f"{name} {fmt}: '{words}' not in {line!r}")
    check(t[W][2] == src[W][2], f"{name} {fmt}: codes changed")
    check(same_bits(dequant_lowbit(t, W), src["expected"][3]), f"{name} {fmt}: values changed")
    verify(out, fixture(name), f"{name} {fmt}")
    print(f"{name} --format {fmt}: {declared} ({words})")
# w4g128 still quantizes the float lm_head (32, 128) of the same file.
out, rc, so, se = quantize("llama_fp8_tensor", "w4g128", tag="w4-lm_head")
check(rc == 0 and read(out)[1].get("lowbit.tensor.lm_head.weight") == "w4g128",
      f"w4g128: lm_head not quantized: {so} {se}")

# -----------------------------------------------------------------------------------------
# Selection: an fp8 weight not selected is copied with its companions; companions are never
# quantized on their own, even when --include matches them
# -----------------------------------------------------------------------------------------
src, _ = read(fixture("llama_fp8_tensor"))
out, rc, so, se = quantize("llama_fp8_tensor", "fp8-tensor", "--include", "lm_head", tag="unselected")
t, meta = read(out)
check(rc == 0 and ("lowbit.tensor." + W) not in meta, f"unselected: {rc} {meta} {se}")
for n in (W, W + "_scale", P + ".input_scale"):
    check(n in t and t[n][:3] == src[n][:3], f"unselected: {n} not copied unchanged")
rc, so, se = run("inspect", out)
check(rc == 0 and "per-tensor convention" in line_of(so, W),
      f"inspect of the unselected fp8 weight: {rc} {so} {se}")

out, rc, so, se = quantize("llama_fp8_tensor", "fp8-tensor", "--include", ".*", tag="all")
t, meta = read(out)
check(rc == 0, f"--include .*: {rc} {se}")
check(t[P + ".input_scale"][:3] == src[P + ".input_scale"][:3] and
      (P + ".input_scale_scale") not in t and ("lowbit.tensor." + P + ".input_scale") not in meta,
      f"--include .*: input_scale was quantized: {sorted(t)}")
check(meta.get("lowbit.tensor." + W) == "fp8-tensor", f"--include .*: {W} not imported: {meta}")

# -----------------------------------------------------------------------------------------
# Malformed fixtures: one `lowbit:` line naming the problem, exit 1, no output file
# -----------------------------------------------------------------------------------------
malformed = {
    "bad_scale_shape": "shape no convention has",
    "bad_block_shape": "expected [2, 1]",
    "e5m2_weight": "actual F8_E5M2",
    "int_scale": "actual I32",
    "zero_scale": "is 0 (expected finite and > 0)",
    "nonfinite_scale_inv": "at block (1, 0) is inf",
    "nan_code": "NaN code 0x7f at row 3, col 5",
    "missing_scale": "missing scale",
    "both_scales": "both",
    "bad_input_scale": "input scale",
    "negative_input_scale": "is -1",
}
for name, needle in malformed.items():
    out, rc, so, se = quantize(name, "fp8-tensor")
    lines = [l for l in se.splitlines() if l.strip()]
    check(rc == 1 and len(lines) == 1 and lines[0].startswith("lowbit: ") and needle in lines[0]
          and f"fp8 weight '{W}'" in lines[0], f"quantize {name}: rc {rc}, stderr {se!r}")
    check(not os.path.exists(out), f"quantize {name}: wrote {out} anyway")
    rc, so, se = run("inspect", fixture(name))
    check(rc == 1 and "NOT IMPORTABLE" in so and needle in so, f"inspect {name}: {rc} {so} {se}")
# Not selected, a malformed weight is just copied (and then nothing is quantized: exit 2).
out, rc, so, se = quantize("nan_code", "fp8-tensor", "--exclude", "up_proj", tag="excluded")
check(rc == 2 and "no tensor matched" in se, f"excluded malformed weight: {rc} {se}")
print(f"{len(malformed)} malformed fixtures refused")

# -----------------------------------------------------------------------------------------
# inspect names the convention of each original
# -----------------------------------------------------------------------------------------
for name, _, conv, _, has_input in native:
    rc, so, se = run("inspect", fixture(name))
    line = line_of(so, W)
    check(rc == 0 and f"fp8 checkpoint: {conv} convention" in line and
          (("input_scale" in line) == has_input), f"inspect {name}: {rc} {line!r} {se}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all fp8 checkpoint import tests passed")
