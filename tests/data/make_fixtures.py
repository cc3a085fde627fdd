#!/usr/bin/env python3
"""Writes safetensors fixtures with the reference `safetensors` library (numpy front end).

Usage: make_fixtures.py OUT_DIR

Files written (all values drawn from a fixed seed, so reruns are byte-identical):
  model_small.safetensors    a model-like checkpoint: 2-D F32 / F16 (and BF16 with ml_dtypes)
                             projection weights named like Hugging Face Llama checkpoints,
                             a 1-D F32 norm, an I64 tensor, and __metadata__ {"format": "pt"}
  llama3_fp8.safetensors     (ml_dtypes only) the Llama-3.1-8B-Instruct-FP8 convention:
                             NAME.weight F8_E4M3 (n, k), NAME.weight_scale F32 [] and
                             NAME.input_scale F32 [] (per-tensor scales), plus a BF16 norm
  deepseek_v3_fp8.safetensors  (ml_dtypes only) the DeepSeek-V3 convention: NAME.weight
                             F8_E4M3 (n, k) and NAME.weight_scale_inv F32
                             (ceil(n/128), ceil(k/128)), W = fp8 * scale_inv per 128x128 block
  manifest.json              name -> {dtype, shape} of every tensor of every file written,
                             for tests to compare against

Needs: pip install safetensors numpy ml_dtypes (ml_dtypes is optional: without it the BF16
tensors and both FP8 files are skipped, and the manifest says so).
"""
import json
import math
import os
import sys

import numpy as np
from safetensors.numpy import save_file

try:
    import ml_dtypes
except ImportError:  # BF16 and FP8 need ml_dtypes' numpy dtypes
    ml_dtypes = None

E4M3_MAX = 448.0
BLOCK = 128

DTYPE_NAMES = {  # numpy dtype name -> safetensors dtype string
    "float32": "F32", "float16": "F16", "bfloat16": "BF16", "float8_e4m3fn": "F8_E4M3",
    "int64": "I64", "int32": "I32", "uint8": "U8", "int8": "I8",
}


def to_e4m3(x):
    """fp32 -> float8_e4m3fn, saturating at +-448 (ml_dtypes' cast would give NaN)."""
    return np.clip(x, -E4M3_MAX, E4M3_MAX).astype(ml_dtypes.float8_e4m3fn)


def model_small(rng):
    hidden, inter = 64, 96
    t = {
        "model.embed_tokens.weight": rng.standard_normal((32, hidden)).astype(np.float32),
        "model.layers.0.self_attn.q_proj.weight": (0.05 * rng.standard_normal((hidden, hidden))).astype(np.float32),
        "model.layers.0.self_attn.k_proj.weight": (0.05 * rng.standard_normal((32, hidden))).astype(np.float16),
        "model.layers.0.mlp.down_proj.weight": (0.05 * rng.standard_normal((hidden, inter))).astype(np.float16),
        "model.layers.0.input_layernorm.weight": (1.0 + 0.01 * rng.standard_normal(hidden)).astype(np.float32),
        "model.rotary_emb.position_ids": np.arange(16, dtype=np.int64).reshape(1, 16),
    }
    if ml_dtypes is not None:
        t["model.layers.0.mlp.up_proj.weight"] = (
            0.05 * rng.standard_normal((inter, hidden))).astype(ml_dtypes.bfloat16)
    return t, {"format": "pt"}


def llama3_fp8(rng):
    """Per-tensor FP8 as in neuralmagic/meta Llama-3.1-8B-Instruct-FP8."""
    t = {}
    for name, (n, k) in {"self_attn.q_proj": (64, 64), "self_attn.o_proj": (64, 64),
                         "mlp.gate_proj": (96, 64), "mlp.down_proj": (64, 96)}.items():
        w = (0.05 * rng.standard_normal((n, k))).astype(np.float32)
        scale = np.float32(np.abs(w).max() / E4M3_MAX)
        prefix = f"model.layers.0.{name}"
        t[prefix + ".weight"] = to_e4m3(w / scale)
        t[prefix + ".weight_scale"] = np.array(scale, dtype=np.float32)  # shape []
        t[prefix + ".input_scale"] = np.array(np.float32(0.0125), dtype=np.float32)
    t["model.layers.0.input_layernorm.weight"] = np.ones(64, dtype=ml_dtypes.bfloat16)
    return t, {"format": "pt"}


def deepseek_v3_fp8(rng):
    """128x128 block-scaled FP8 as in deepseek-ai/DeepSeek-V3 (weight_scale_inv multiplies)."""
    t = {}
    # Shapes that are not multiples of 128 exercise the partial edge blocks.
    for name, (n, k) in {"self_attn.q_a_proj": (200, 300), "mlp.gate_proj": (256, 128)}.items():
        w = (0.05 * rng.standard_normal((n, k))).astype(np.float32)
        sr, sc = math.ceil(n / BLOCK), math.ceil(k / BLOCK)
        scale_inv = np.empty((sr, sc), dtype=np.float32)
        codes = np.empty((n, k), dtype=ml_dtypes.float8_e4m3fn)
        for i in range(sr):
            for j in range(sc):
                blk = w[i * BLOCK:(i + 1) * BLOCK, j * BLOCK:(j + 1) * BLOCK]
                s = np.float32(max(np.abs(blk).max(), 1e-4) / E4M3_MAX)
                scale_inv[i, j] = s
                codes[i * BLOCK:(i + 1) * BLOCK, j * BLOCK:(j + 1) * BLOCK] = to_e4m3(blk / s)
        prefix = f"model.layers.0.{name}"
        t[prefix + ".weight"] = codes
        t[prefix + ".weight_scale_inv"] = scale_inv
    t["model.layers.0.input_layernorm.weight"] = np.ones(300, dtype=ml_dtypes.bfloat16)
    return t, None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20240611)
    makers = [("model_small.safetensors", model_small)]
    if ml_dtypes is not None:
        makers += [("llama3_fp8.safetensors", llama3_fp8),
                   ("deepseek_v3_fp8.safetensors", deepseek_v3_fp8)]
    manifest = {"ml_dtypes": ml_dtypes is not None, "files": {}}
    for filename, make in makers:
        tensors, metadata = make(rng)
        save_file(tensors, os.path.join(out, filename), metadata=metadata)
        manifest["files"][filename] = {
            name: {"dtype": DTYPE_NAMES[a.dtype.name], "shape": list(a.shape)}
            for name, a in tensors.items()}
        print(f"wrote {os.path.join(out, filename)} ({len(tensors)} tensors)")
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
