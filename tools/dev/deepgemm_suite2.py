#!/usr/bin/env python3
"""DeepGEMM on Suite 2, timed with lowbit bench's method, side by side with lowbit.

Issue 4 asks that no Suite 2 shape run slower than 1.1x DeepGEMM's figure "in bench/ side by
side or ANCHORS.md"; ANCHORS.md holds DeepGEMM's geometric mean only. This script times
DeepGEMM's fp8 block-scaled GEMM (`deep_gemm.gemm_fp8_fp8_bf16_nt`, 1x128 activation blocks x
128x128 weight blocks, fp32 scales, bf16 output) on the 18 Suite 2 shapes on the device machine, and
with `--lowbit-json` (the bench.json of a `lowbit bench --suite suite2 --json ...` run on the
same GPU, ideally the same device call) writes the per-shape table: lowbit's fp8_block,
cuBLASLt blockwise, DeepGEMM, and lowbit / DeepGEMM.

DeepGEMM is the Python-JIT release that sgl-kernel 0.1.5's wheel carries (May 2025, the one
ANCHORS.md quotes; tools/dev/fetch-deepgemm.sh -> .deps/deepgemm.tar.xz); `--deepgemm-tar`
unpacks it. Its JIT compiles one kernel per (n, k, config) with nvcc; `--compile-jobs` warms the
JIT cache with that many processes first. Its own heuristic picks each shape's configuration.

The method is lowbit bench's (bench/gpu_backend.hpp, ANCHORS.md): operands in enough copies that
one rotation touches more than 3x the L2; one CUDA graph of `calls` launches cycling through the
copies (a replay of at least --target-ms, calls a multiple of copies); one warm-up replay, then
--reps timed replays with events; per-call time = median replay / calls. Operands: random normal
activations and weights, quantized here (per 1x128 / 128x128 block: scale = amax / 448).
Correctness: DeepGEMM's output against an fp32 product of the dequantized operands (relative
Frobenius error, the figure ANCHORS.md quotes for fp8 block GEMMs: 1.66e-3).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
import time

SUITE2 = [(1536, 7168), (3072, 1536), (576, 7168), (7168, 256), (7168, 2048), (4608, 7168),
          (7168, 2304), (512, 7168), (4096, 512)]  # (n, k), ANCHORS.md order
SUITE2_M = (1024, 6144)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--deepgemm-tar", help="unpack this deep_gemm tarball (fetch-deepgemm.sh)")
    p.add_argument("--workdir", default="/tmp/deepgemm", help="where to unpack and cache the JIT")
    p.add_argument("--lowbit-json", help="bench.json of lowbit bench --suite suite2 (same GPU)")
    p.add_argument("--out-json", help="write DeepGEMM's figures here")
    p.add_argument("--out-md", help="write the side-by-side table here")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--target-ms", type=float, default=50.0)
    p.add_argument("--compile-jobs", type=int, default=16)
    p.add_argument("--shapes", help="m:n:k,... instead of Suite 2 (e.g. 4096:7168:16384)")
    p.add_argument("--results-json", help="no timing: write --out-md from an earlier --out-json")
    p.add_argument("--one", help=argparse.SUPPRESS)  # m:n:k, JIT warm-up of one shape (child)
    return p.parse_args()


def import_deepgemm(args):
    if args.deepgemm_tar:
        os.makedirs(args.workdir, exist_ok=True)
        if not os.path.isdir(os.path.join(args.workdir, "site", "deep_gemm")):
            with tarfile.open(args.deepgemm_tar) as t:
                t.extractall(args.workdir)
    sys.path.insert(0, os.path.join(args.workdir, "site"))
    os.environ.setdefault("DG_JIT_CACHE_DIR", os.path.join(args.workdir, "jit-cache"))
    import deep_gemm
    return deep_gemm


def quantize_blocks(x, rows, cols):
    """x (R, C) fp32 -> (e4m3 (R, C), fp32 scales (ceil(R/rows), ceil(C/cols))), one scale per
    rows x cols block: amax / 448 (1 for an all-zero block); partial blocks at the edges."""
    import torch
    r, c = x.shape
    rb, cb = -(-r // rows), -(-c // cols)
    pad = torch.zeros(rb * rows, cb * cols, dtype=torch.float32, device=x.device)
    pad[:r, :c] = x
    blocks = pad.view(rb, rows, cb, cols)
    amax = blocks.abs().amax(dim=(1, 3))
    scale = torch.where(amax > 0, amax / 448.0, torch.ones_like(amax))
    q = (blocks / scale[:, None, :, None]).clamp(-448, 448).to(torch.float8_e4m3fn)
    return q.view(rb * rows, cb * cols)[:r, :c].contiguous(), scale.contiguous()


def dequantize_blocks(q, scale, rows, cols):
    r, c = q.shape
    s = scale.repeat_interleave(rows, 0)[:r].repeat_interleave(cols, 1)[:, :c]
    return q.float() * s


def make_operands(dg, m, n, k, seed):
    import torch
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(m, k, generator=g, device="cuda")
    w = torch.randn(n, k, generator=g, device="cuda")
    a, sa = quantize_blocks(x, 1, 128)
    b, sb = quantize_blocks(w, 128, 128)
    # The layout DeepGEMM's sm_90 kernel reads the activation scales in (MN-major, TMA-aligned),
    # made once here so that the timed call does not transform them.
    sa_tma = dg.get_col_major_tma_aligned_tensor(sa)
    d = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    return a, sa, sa_tma, b, sb, d


def call(dg, ops):
    a, _, sa_tma, b, sb, d = ops
    dg.gemm_fp8_fp8_bf16_nt((a, sa_tma), (b, sb), d)


def rel_err(dg, ops):
    import torch
    a, sa, _, b, sb, d = ops
    call(dg, ops)
    torch.cuda.synchronize()
    ref = dequantize_blocks(a, sa, 1, 128) @ dequantize_blocks(b, sb, 128, 128).T
    return float(torch.linalg.norm(d.float() - ref) / torch.linalg.norm(ref))


def kernels_of_one_call(dg, ops):
    import torch
    from torch.profiler import profile, ProfilerActivity
    call(dg, ops)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call(dg, ops)
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type.name == "CUDA"})


def time_shape(dg, m, n, k, reps, target_ms, seed):
    import torch
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    first = make_operands(dg, m, n, k, seed)
    set_bytes = sum(t.numel() * t.element_size() for t in (first[0], first[2], first[3],
                                                           first[4], first[5]))
    copies = max(1, math.ceil(3 * l2 / set_bytes) + 1)
    sets = [first] + [make_operands(dg, m, n, k, seed + i) for i in range(1, copies)]
    err = rel_err(dg, first)
    kernels = kernels_of_one_call(dg, first)

    # Size the graph: one rotation first, then enough rotations for target_ms per replay.
    def build(rotations):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for ops in sets:  # JIT and allocator warm-up outside the capture
                call(dg, ops)
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(rotations):
                for ops in sets:
                    call(dg, ops)
        return graph

    def replay_ms(graph):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    probe = build(1)
    replay_ms(probe)
    one = replay_ms(probe)
    del probe
    rotations = max(1, math.ceil(target_ms / max(one, 1e-3)))
    graph = build(rotations)
    calls = rotations * copies
    replay_ms(graph)  # warm-up
    samples = [replay_ms(graph) * 1e3 / calls for _ in range(reps)]
    us = statistics.median(samples)
    flops = 2.0 * m * n * k
    return {"m": m, "n": n, "k": k, "us": us, "samples_us": samples, "calls": calls,
            "copies": copies, "rotation_bytes": copies * set_bytes,
            "tflops": flops / us / 1e6, "rel_err": err, "kernels": kernels}


def warm_jit(args, shapes):
    """Compiles every shape's kernel in parallel child processes (DeepGEMM's JIT compiles on
    first use, one nvcc run per kernel, sequentially inside one process)."""
    jobs = []
    t0 = time.time()
    pending = list(shapes)
    running = []
    while pending or running:
        while pending and len(running) < args.compile_jobs:
            m, n, k = pending.pop(0)
            cmd = [sys.executable, os.path.abspath(__file__), "--workdir", args.workdir,
                   "--one", f"{m}:{n}:{k}"]
            running.append((f"{m}x{n}x{k}", subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                                              stderr=subprocess.STDOUT)))
        name, proc = running.pop(0)
        out, _ = proc.communicate()
        if proc.returncode != 0:
            sys.stderr.write(f"JIT warm-up of {name} failed:\n{out.decode(errors='replace')}\n")
            sys.exit(1)
        jobs.append(name)
    print(f"JIT warm-up: {len(jobs)} shapes in {time.time() - t0:.1f} s", flush=True)


def load_lowbit(path):
    with open(path) as f:
        data = json.load(f)
    rows = {}
    for r in data["records"]:
        if r.get("suite") != "suite2" or r.get("state") != "ok":
            continue
        rows[(r["variant"], r["m"], r["n"], r["k"])] = r["us"]
    return data.get("gpu", {}), rows


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def write_md(path, gpu_name, results, lowbit):
    lines = [f"# Suite 2 side by side: lowbit fp8_block, cuBLASLt blockwise, DeepGEMM ({gpu_name})",
             "",
             "us per call, lowbit bench's method for all three (DeepGEMM by "
             "tools/dev/deepgemm_suite2.py). Issue 4: no shape above 1.1x DeepGEMM.",
             "",
             "| m | n | k | lowbit fp8_block | cuBLASLt block | DeepGEMM | lowbit / DeepGEMM |"
             " DeepGEMM TFLOP/s | DeepGEMM rel. err |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    ours, theirs, lts = [], [], []
    worst = (0.0, None)
    for r in results:
        key = (r["m"], r["n"], r["k"])
        lb = lowbit.get(("fp8_block",) + key)
        lt = lowbit.get(("cublaslt_fp8_block",) + key)
        ratio = lb / r["us"] if lb else None
        if ratio and ratio > worst[0]:
            worst = (ratio, key)
        if lb:
            ours.append(lb)
        if lt:
            lts.append(lt)
        theirs.append(r["us"])
        fmt = lambda v: f"{v:.1f}" if v else "-"
        lines.append(f"| {r['m']} | {r['n']} | {r['k']} | {fmt(lb)} | {fmt(lt)} | {r['us']:.1f} | "
                     f"{(f'{ratio:.2f}' + (' **>1.1**' if ratio > 1.1 else '')) if ratio else '-'} | "
                     f"{r['tflops']:.0f} | {r['rel_err']:.2e} |")
    lines += ["", f"Geometric means: lowbit {geomean(ours):.1f}, cuBLASLt {geomean(lts):.1f}, "
              f"DeepGEMM {geomean(theirs):.1f} us"
              + (f"; largest lowbit / DeepGEMM {worst[0]:.2f} at m, n, k = {worst[1]}" if worst[1]
                 else ""),
              f"Shapes above 1.1x DeepGEMM: "
              f"{sum(1 for r in results if lowbit.get(('fp8_block', r['m'], r['n'], r['k'])) and lowbit[('fp8_block', r['m'], r['n'], r['k'])] / r['us'] > 1.1)}"
              f" of {len(results)}.", "",
              "DeepGEMM's kernels per call (torch profiler, one call):", ""]
    for r in results:
        lines.append(f"- {r['m']}x{r['n']}x{r['k']}: {', '.join(r['kernels'])}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    args = parse_args()
    if args.results_json:
        with open(args.results_json) as f:
            saved = json.load(f)
        lowbit = load_lowbit(args.lowbit_json)[1] if args.lowbit_json else {}
        write_md(args.out_md, saved["gpu"], saved["results"], lowbit)
        return
    dg = import_deepgemm(args)
    import torch
    if args.one:
        m, n, k = map(int, args.one.split(":"))
        call(dg, make_operands(dg, m, n, k, 1))
        torch.cuda.synchronize()
        return
    if args.shapes:
        shapes = [tuple(map(int, s.split(":"))) for s in args.shapes.split(",")]
    else:
        shapes = [(m, n, k) for (n, k) in SUITE2 for m in SUITE2_M]
    gpu = torch.cuda.get_device_name(0)
    print(f"{gpu}, torch {torch.__version__}, DeepGEMM from {dg.__file__}", flush=True)
    if args.compile_jobs > 1:
        warm_jit(args, shapes)
    results = []
    for i, (m, n, k) in enumerate(shapes):
        r = time_shape(dg, m, n, k, args.reps, args.target_ms, 1000 + 17 * i)
        print(f"m={m:5d} n={n:5d} k={k:5d}  {r['us']:8.2f} us  {r['tflops']:6.0f} TFLOP/s  "
              f"rel_err {r['rel_err']:.2e}  copies {r['copies']} calls {r['calls']}  "
              f"{'; '.join(r['kernels'])}", flush=True)
        results.append(r)
    print(f"DeepGEMM geomean {geomean([r['us'] for r in results]):.2f} us", flush=True)
    if args.out_json:
        with open(args.out_json, "w") as f:
            json.dump({"gpu": gpu, "torch": torch.__version__, "method": {
                "reps": args.reps, "target_ms": args.target_ms}, "results": results}, f, indent=1)
    if args.out_md:
        lowbit = load_lowbit(args.lowbit_json)[1] if args.lowbit_json else {}
        write_md(args.out_md, gpu, results, lowbit)


if __name__ == "__main__":
    main()
