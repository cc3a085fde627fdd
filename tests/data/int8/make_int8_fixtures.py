#!/usr/bin/env python3
"""Writes the int8 W8A8 checkpoint fixtures of tests/data/int8/ (compressed-tensors format, as
llm-compressor saves it) with the reference `safetensors` library (its numpy front end;
ml_dtypes provides numpy's bfloat16 dtype).

Usage (from the repository root; reruns are byte-identical, the data comes from a fixed seed):

    pip install safetensors numpy ml_dtypes
    python3 tests/data/int8/make_int8_fixtures.py tests/data/int8

(The checked-in files were written with safetensors 0.8.0, numpy 2.4.6, ml_dtypes 0.6.0.) The
conventions are those of include/lowbit/import_int8.hpp and docs/formats.md section 10. Every
file holds ONE int8 weight W = "model.layers.0.self_attn.o_proj.weight" with its companions.

The codes of every weight follow a formula the C++ test recomputes on its own:
    code[r][c] = ((r * k + c) * 7 + 3) mod 256 - 128
which visits every int8 value, -128 and 127 included. The expected fp32 scales (per row, a
per-tensor scale repeated) and the input parameters of the well-formed files are written to
expected.json, scales as the integer bit patterns of their float32 values, converted HERE by
numpy / ml_dtypes from the stored dtype (exact), so the test compares bits, not decimals.

Well-formed files:
  channel_f32_static   strategy "channel": weight_scale F32 (n, 1), static input_scale F32 [];
                       W (40, 64)
  channel_1d_bf16      weight_scale BF16 (n), no input parameters (dynamic per-token); W (24, 48)
  tensor_f16           strategy "tensor": weight_scale F16 []; W (16, 32)
  symmetric_zero_point weight_scale F32 (n, 1) and weight_zero_point I8 (n, 1) all zeros (what
                       compressed-tensors writes for symmetric args with a zero point); W (8, 32)
  static_asym_input    weight_scale F32 (n, 1), input_scale F32 [1] and input_zero_point I32 [1]
                       = -3 (static asymmetric activations, vLLM's azp path); W (24, 32)

Malformed files (tests expect import_int8 to refuse each with the problem named; W (8, 16)
unless said):
  weight_u8            a U8 weight with a weight_scale
  weight_3d            an I8 weight of shape (2, 4, 16)
  weight_empty         an I8 weight of shape (0, 16)
  missing_scale        an I8 weight (and an input_scale) with no weight_scale
  scale_f64            weight_scale F64 []
  scale_bad_shape      weight_scale F32 (3) for n = 8
  scale_group          weight_scale F32 (8, 4): strategy "group" (group size 4 of k = 16)
  scale_negative       per-channel weight_scale with -0.5 at row 2
  scale_inf_bf16       per-channel weight_scale BF16 with +inf at row 5
  asym_weight          weight_zero_point I8 (8, 1) with 5 at row 3
  zero_point_f32       weight_zero_point F32 (8, 1) (all zero, but not an integer dtype)
  zero_point_shape     weight_zero_point I32 (8) next to a per-tensor weight_scale []
  input_scale_shape    input_scale F32 (2)
  input_scale_zero     input_scale F32 [] = 0
  input_zp_range       input_scale F32 [] and input_zero_point I32 [] = 200
  input_zp_no_scale    input_zero_point I8 [] without an input_scale
"""
import json
import os
import sys

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file

BF16 = ml_dtypes.bfloat16
P = "model.layers.0.self_attn.o_proj"
W = P + ".weight"


def codes(n, k):
    """The formula of the docstring (the C++ test recomputes it)."""
    i = np.arange(n * k, dtype=np.int64).reshape(n, k)
    return ((i * 7 + 3) % 256 - 128).astype(np.int8)


def row_scales(rng, n, dtype):
    """Positive scales of a plausible size (amax / 127 of weights ~ N(0, 0.05)), in `dtype`."""
    return (rng.uniform(0.5, 2.0, size=n) * 0.15 / 127).astype(np.float32).astype(dtype)


def bits(values):
    """float32 bit patterns of `values` (any float dtype, converted exactly)."""
    return [int(b) for b in np.asarray(values).astype(np.float32).reshape(-1).view(np.uint32)]


def well_formed(rng):
    files, expected = {}, {}

    def add(name, n, k, tensors, scale, input_scale=None, input_zero_point=None):
        files[name] = {W: codes(n, k), **tensors}
        per_row = np.broadcast_to(np.asarray(scale).astype(np.float32).reshape(-1), (n,))
        expected[name] = {
            "n": n, "k": k,
            "convention": "per-tensor" if np.asarray(scale).size == 1 else "per-channel",
            "scale_bits": bits(per_row),
            "input_scale_bits": None if input_scale is None else bits(input_scale)[0],
            "input_zero_point": None if input_zero_point is None else int(np.asarray(input_zero_point).reshape(-1)[0]),
            "companions": sorted(tensors),
        }

    s = row_scales(rng, 40, np.float32).reshape(40, 1)
    in_s = np.array(0.0123, dtype=np.float32)
    add("channel_f32_static", 40, 64, {W + "_scale": s, P + ".input_scale": in_s}, s, in_s)

    s = row_scales(rng, 24, BF16)
    add("channel_1d_bf16", 24, 48, {W + "_scale": s}, s)

    s = np.array(0.0017, dtype=np.float16)
    add("tensor_f16", 16, 32, {W + "_scale": s}, s)

    s = row_scales(rng, 8, np.float32).reshape(8, 1)
    add("symmetric_zero_point", 8, 32,
        {W + "_scale": s, W + "_zero_point": np.zeros((8, 1), dtype=np.int8)}, s)

    s = row_scales(rng, 24, np.float32).reshape(24, 1)
    in_s = np.array([0.02], dtype=np.float32)
    in_z = np.array([-3], dtype=np.int32)
    add("static_asym_input", 24, 32,
        {W + "_scale": s, P + ".input_scale": in_s, P + ".input_zero_point": in_z}, s, in_s, in_z)
    return files, expected


def malformed(rng):
    w = codes(8, 16)
    channel = row_scales(rng, 8, np.float32).reshape(8, 1)
    tensor = np.array(0.001, dtype=np.float32)
    good = {W: w, W + "_scale": channel}
    negative = channel.copy()
    negative[2, 0] = -0.5
    inf_bf16 = channel.astype(BF16)
    inf_bf16[5, 0] = np.inf
    asym = np.zeros((8, 1), dtype=np.int8)
    asym[3, 0] = 5
    return {
        "weight_u8": {W: w.view(np.uint8), W + "_scale": channel},
        "weight_3d": {W: codes(8, 16).reshape(2, 4, 16), W + "_scale": tensor},
        "weight_empty": {W: np.zeros((0, 16), dtype=np.int8), W + "_scale": tensor},
        "missing_scale": {W: w, P + ".input_scale": np.array(0.01, dtype=np.float32)},
        "scale_f64": {W: w, W + "_scale": np.array(0.001, dtype=np.float64)},
        "scale_bad_shape": {W: w, W + "_scale": np.full(3, 0.001, dtype=np.float32)},
        "scale_group": {W: w, W + "_scale": np.full((8, 4), 0.001, dtype=np.float32)},
        "scale_negative": {W: w, W + "_scale": negative},
        "scale_inf_bf16": {W: w, W + "_scale": inf_bf16},
        "asym_weight": {**good, W + "_zero_point": asym},
        "zero_point_f32": {**good, W + "_zero_point": np.zeros((8, 1), dtype=np.float32)},
        "zero_point_shape": {W: w, W + "_scale": tensor, W + "_zero_point": np.zeros(8, dtype=np.int32)},
        "input_scale_shape": {**good, P + ".input_scale": np.full(2, 0.01, dtype=np.float32)},
        "input_scale_zero": {**good, P + ".input_scale": np.array(0.0, dtype=np.float32)},
        "input_zp_range": {**good, P + ".input_scale": np.array(0.01, dtype=np.float32),
                           P + ".input_zero_point": np.array(200, dtype=np.int32)},
        "input_zp_no_scale": {**good, P + ".input_zero_point": np.array(-3, dtype=np.int8)},
    }


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(8)
    files, expected = well_formed(rng)
    files.update(malformed(rng))
    for name, tensors in files.items():
        path = os.path.join(out, name + ".safetensors")
        # One metadata key: the library orders several at random, and reruns must match.
        save_file(tensors, path, metadata={"format": "pt"})
        print(f"wrote {path} ({len(tensors)} tensors, {os.path.getsize(path)} bytes)")
    path = os.path.join(out, "expected.json")
    with open(path, "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
