#!/usr/bin/env python3
"""Writes the fp8 checkpoint fixtures of tests/data/fp8/ with the reference `safetensors`
library (its numpy front end; ml_dtypes provides numpy's float8 and bfloat16 dtypes).

Usage (from the repository root; reruns are byte-identical, the data comes from a fixed seed):

    python3 -m venv /tmp/fp8-fixtures && /tmp/fp8-fixtures/bin/pip install safetensors numpy ml_dtypes
    /tmp/fp8-fixtures/bin/python tools/dev/make_fp8_fixtures.py tests/data/fp8

(`tools/setup.sh` installs the same three packages for the tests; the checked-in files were
written with safetensors 0.8.0, numpy 2.4.6, ml_dtypes 0.6.0.) The conventions are those of
include/lowbit/import_fp8.hpp and docs/formats.md section 9. Every well-formed file holds ONE
fp8 weight W = "model.layers.0.mlp.up_proj.weight" with its companions, and an F32 tensor
`expected`: W dequantized HERE, by ml_dtypes' own e4m3 -> float32 conversion times the scale
broadcast by the convention's rule, in float32 (one IEEE multiply per element, as lowbit's
Fp8Tensor::dequant does). It is the oracle the tests compare lowbit's import with, exactly.

Well-formed files:
  llama_fp8_tensor.safetensors   Llama-3.1-8B-Instruct-FP8 (seed 001): W F8_E4M3 (96, 160),
                                 weight_scale F32 [], input_scale F32 []; plus a BF16 norm and
                                 an F32 `lm_head.weight` (32, 128) that `lowbit quantize`
                                 quantizes as before
  tensor_scale1.safetensors      compressed-tensors "tensor": weight_scale F16 [1],
                                 input_scale BF16 [1], W (64, 48)
  channel_fp8.safetensors        compressed-tensors "channel": weight_scale BF16 (200, 1),
                                 W (200, 144), no input_scale (dynamic per-token activations)
  channel_1d.safetensors         weight_scale F32 (48) and a static input_scale F32 [], W (48, 64)
  deepseek_block.safetensors     DeepSeek-V3: weight_scale_inv F32 (2, 2) for W (200, 144), so
                                 the last block is partial along both axes (72 rows, 16 columns)
Each W also holds the special codes -0 (0x80), the smallest subnormal (0x01, 2^-9) and +-448
(0x7e, 0xfe) at fixed places.

Malformed files (tests expect import_fp8 to refuse each with the problem named):
  bad_scale_shape      weight_scale F32 (3) for n = 8
  bad_block_shape      weight_scale_inv (1, 1) for n = 130, k = 16 (expected (2, 1))
  e5m2_weight          an F8_E5M2 weight with a weight_scale
  int_scale            weight_scale I32 []
  zero_scale           weight_scale 0
  nonfinite_scale_inv  weight_scale_inv (2, 1) with +inf at block (1, 0)
  nan_code             code 0x7f (e4m3 NaN) at row 3, col 5
  missing_scale        an F8_E4M3 weight (and an input_scale) with no weight_scale
  both_scales          weight_scale and weight_scale_inv
  bad_input_scale      input_scale of shape (2)
  negative_input_scale input_scale -1
"""
import math
import os
import sys

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file

E4M3 = ml_dtypes.float8_e4m3fn
BF16 = ml_dtypes.bfloat16
E4M3_MAX = np.float32(448.0)
BLOCK = 128
P = "model.layers.0.mlp.up_proj"
W = P + ".weight"


def to_e4m3(x):
    """float32 -> e4m3fn codes, saturating at +-448 (a plain cast would give NaN)."""
    return np.clip(x, -E4M3_MAX, E4M3_MAX).astype(E4M3)


def plant_specials(codes):
    """Codes whose decoding is easy to get wrong: -0, the smallest subnormal, +-448."""
    u = codes.view(np.uint8)
    u[0, 0], u[0, 1], u[1, 0], u[-1, -1] = 0x80, 0x01, 0x7E, 0xFE
    return codes


def weight(rng, n, k):
    return (0.05 * rng.standard_normal((n, k))).astype(np.float32)


def dequant(codes, scale_grid, br, bc):
    """Oracle: ml_dtypes' e4m3 -> float32, times the scale of each element's cell."""
    n, k = codes.shape
    s = np.repeat(np.repeat(scale_grid.astype(np.float32), br, axis=0), bc, axis=1)[:n, :k]
    return codes.astype(np.float32) * s


def per_tensor(rng, n, k, scale_dtype):
    w = weight(rng, n, k)
    scale = np.array(np.abs(w).max() / E4M3_MAX, dtype=np.float32).astype(scale_dtype)
    codes = plant_specials(to_e4m3(w / scale.astype(np.float32)))
    return codes, scale, dequant(codes, scale.reshape(1, 1), n, k)


def per_channel(rng, n, k, scale_dtype):
    w = weight(rng, n, k)
    scale = (np.abs(w).max(axis=1, keepdims=True) / E4M3_MAX).astype(np.float32).astype(scale_dtype)
    codes = plant_specials(to_e4m3(w / scale.astype(np.float32)))
    return codes, scale, dequant(codes, scale, 1, k)


def block_128(rng, n, k):
    w = weight(rng, n, k)
    sr, sc = math.ceil(n / BLOCK), math.ceil(k / BLOCK)
    scale_inv = np.empty((sr, sc), dtype=np.float32)
    for i in range(sr):
        for j in range(sc):
            blk = w[i * BLOCK:(i + 1) * BLOCK, j * BLOCK:(j + 1) * BLOCK]
            scale_inv[i, j] = np.abs(blk).max() / E4M3_MAX
    s = np.repeat(np.repeat(scale_inv, BLOCK, axis=0), BLOCK, axis=1)[:n, :k]
    codes = plant_specials(to_e4m3(w / s))
    return codes, scale_inv, dequant(codes, scale_inv, BLOCK, BLOCK)


def well_formed(rng):
    files = {}
    codes, scale, expected = per_tensor(rng, 96, 160, np.float32)
    files["llama_fp8_tensor"] = {
        W: codes, W + "_scale": scale, P + ".input_scale": np.array(0.0125, dtype=np.float32),
        "model.layers.0.post_attention_layernorm.weight": np.ones(160, dtype=BF16),
        "lm_head.weight": weight(rng, 32, 128), "expected": expected}
    codes, scale, expected = per_tensor(rng, 64, 48, np.float16)
    files["tensor_scale1"] = {
        W: codes, W + "_scale": scale.reshape(1), P + ".input_scale": np.array([0.02], dtype=BF16),
        "expected": expected}
    codes, scale, expected = per_channel(rng, 200, 144, BF16)
    files["channel_fp8"] = {W: codes, W + "_scale": scale, "expected": expected}
    codes, scale, expected = per_channel(rng, 48, 64, np.float32)
    files["channel_1d"] = {W: codes, W + "_scale": scale.reshape(48),
                           P + ".input_scale": np.array(0.5, dtype=np.float32), "expected": expected}
    codes, scale_inv, expected = block_128(rng, 200, 144)
    files["deepseek_block"] = {W: codes, W + "_scale_inv": scale_inv, "expected": expected}
    return files


def malformed(rng):
    codes, scale, _ = per_tensor(rng, 8, 16, np.float32)
    good = {W: codes, W + "_scale": scale}
    block_codes, scale_inv, _ = block_128(rng, 130, 16)  # scale_inv (2, 1)
    nan = codes.copy()
    nan.view(np.uint8)[3, 5] = 0x7F
    inf_inv = scale_inv.copy()
    inf_inv[1, 0] = np.inf
    return {
        "bad_scale_shape": {W: codes, W + "_scale": np.full(3, scale, dtype=np.float32)},
        "bad_block_shape": {W: block_codes, W + "_scale_inv": scale_inv[:1]},
        "e5m2_weight": {W: np.zeros((8, 16), dtype=ml_dtypes.float8_e5m2), W + "_scale": scale},
        "int_scale": {W: codes, W + "_scale": np.array(3, dtype=np.int32)},
        "zero_scale": {W: codes, W + "_scale": np.array(0.0, dtype=np.float32)},
        "nonfinite_scale_inv": {W: block_codes, W + "_scale_inv": inf_inv},
        "nan_code": {W: nan, W + "_scale": scale},
        "missing_scale": {W: codes, P + ".input_scale": np.array(0.01, dtype=np.float32)},
        "both_scales": {**good, W + "_scale_inv": np.ones((1, 1), dtype=np.float32)},
        "bad_input_scale": {**good, P + ".input_scale": np.full(2, 0.01, dtype=np.float32)},
        "negative_input_scale": {**good, P + ".input_scale": np.array(-1.0, dtype=np.float32)},
    }


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(4)  # issue 4
    for files in (well_formed(rng), malformed(rng)):
        for name, tensors in files.items():
            path = os.path.join(out, name + ".safetensors")
            # One metadata key: the library orders several at random, and reruns must match.
            save_file(tensors, path, metadata={"format": "pt"})
            print(f"wrote {path} ({len(tensors)} tensors, {os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
