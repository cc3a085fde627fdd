#!/usr/bin/env python3
"""Corrupt safetensors files given to the CLI: each must give ONE line on stderr starting
with "lowbit:", a non-zero exit code, and no crash (no signal, no abort, no stack trace).

usage: test_corrupt_files.py LOWBIT_BINARY SCRATCH_DIR
"""
import json
import os
import struct
import subprocess
import sys

lowbit, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)


def image(header, data=b"", pad=True):
    h = json.dumps(header).encode() if not isinstance(header, bytes) else header
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


good_header = {"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
               "__metadata__": {"format": "pt"}}
good = image(good_header, bytes(16))
cases = {
    "truncated_data": (good[:-4], "past"),
    "truncated_header": (good[:20], ""),
    "too_short": (b"\x01\x02", ""),
    "header_length_past_eof": (struct.pack("<Q", 10_000) + b"{}", ""),
    "bad_json": (image(b'{"w": {"dtype": "F32", '), "JSON"),
    "not_an_object": (image([1, 2, 3]), ""),
    "unknown_dtype": (image({"w": {"dtype": "F7", "shape": [2], "data_offsets": [0, 2]}},
                            bytes(2)), "F7"),
    "wrong_dtype_for_size": (image({"w": {"dtype": "F64", "shape": [2, 2],
                                          "data_offsets": [0, 16]}}, bytes(16)), ""),
    "overlapping_offsets": (image({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                   "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}},
                                  bytes(24)), "overlap"),
    "offsets_past_end": (image({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}},
                               bytes(8)), ""),
    "negative_shape": (image({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}},
                             bytes(4)), ""),
    "huge_shape": (image({"w": {"dtype": "F32", "shape": [2**62, 2**62],
                                "data_offsets": [0, 4]}}, bytes(4)), ""),
    "bad_metadata": (image({"__metadata__": {"a": 1}}), "metadata"),
    "lowbit_bad_format": (image({"w.qweight": {"dtype": "U8", "shape": [1, 1], "data_offsets": [0, 1]},
                                 "__metadata__": {"lowbit.format_version": "1",
                                                  "lowbit.tensor.w": "w4g128"}}, bytes(1)), ""),
}

failures = []
for name, (blob, needle) in cases.items():
    path = os.path.join(scratch, f"corrupt_{name}.safetensors")
    with open(path, "wb") as f:
        f.write(blob)
    for cmd in (["inspect", path], ["quantize", path, path + ".out", "--format", "w4g128"]):
        p = subprocess.run([lowbit, *cmd], capture_output=True, text=True, timeout=60)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        ok = (p.returncode > 0 and len(lines) == 1 and lines[0].startswith("lowbit:")
              and needle.lower() in lines[0].lower())
        print(f"{'ok  ' if ok else 'FAIL'} {name:24s} {cmd[0]:8s} exit={p.returncode} "
              f"stderr={lines!r}")
        if not ok:
            failures.append(f"{name} ({cmd[0]})")
        if os.path.exists(path + ".out"):
            failures.append(f"{name}: quantize wrote an output for a corrupt input")

# A missing file and a directory are user errors too.
for path in [os.path.join(scratch, "does_not_exist.safetensors"), scratch]:
    p = subprocess.run([lowbit, "inspect", path], capture_output=True, text=True)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if not (p.returncode > 0 and len(lines) == 1 and lines[0].startswith("lowbit:")):
        failures.append(f"inspect {path}: {p.returncode} {lines}")

if failures:
    print("FAILED:", failures)
    sys.exit(1)
print(f"all {len(cases)} corrupt files rejected cleanly")
