#!/usr/bin/env python3
"""Torch eager and torch.compile for the tensor-core chains, each timed
several times (for a median and a spread, beside tests/gpu/tiles.sh's
repeated runs of ours in the same device call). The chains, inputs and timer
are bench/peers.py's: triton.testing.do_bench(warmup=25, rep=100,
return_mode='median'), which clears a 256 MB L2-flush buffer before each
timed call (tests/gpu/validate.c --flush times ours the same way).

  python3 bench/tiles_peers.py [--repeat 5] [--out FILE.json] [CHAIN:SIZE ...]

CHAIN:SIZE e.g. matmul_bias_relu:1024 (square f16), matmul_bias_relu_bf16:1024,
linear_bias_gelu:4096, matmul_residual:4096 (bf16). Prints a line per repeat and a summary line
per case: median, min and max of the repeats, in ms.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402  (torch, the chains, the timer)

torch = peers.torch

def mm_inputs(dt):  # A, B, bias as bench/peers.py makes them
    return lambda m: (peers.uni((m, m), dtype=dt), peers.uni((m, m), dtype=dt), peers.uni(m, dtype=dt))


def residual_inputs(m):  # A, B, s (f32), bias, R
    bf = torch.bfloat16
    return (peers.uni((m, m), dtype=bf), peers.uni((m, m), dtype=bf), peers.uni(m), peers.uni(m, dtype=bf),
            peers.uni((m, m), dtype=bf))


CHAINS = {  # name: (function, inputs of size m)
    "matmul_bias_relu": (peers.matmul_bias_relu, mm_inputs(torch.float16)),
    "matmul_bias_relu_bf16": (peers.matmul_bias_relu, mm_inputs(torch.bfloat16)),
    "matmul_bias_gelu": (peers.matmul_bias_gelu, mm_inputs(torch.float16)),
    "linear_bias_gelu": (peers.linear_bias_gelu, mm_inputs(torch.bfloat16)),
    "matmul_residual": (peers.matmul_residual, residual_inputs),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None)
    ap.add_argument("cases", nargs="*", default=["matmul_bias_relu:1024", "matmul_bias_relu_bf16:1024"])
    args = ap.parse_args()
    peers.DEV = torch.device("cuda")
    torch.manual_seed(1234)
    doc = {"device": torch.cuda.get_device_name(peers.DEV), "torch": torch.__version__,
           "timer": peers.bench_name(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "results": []}
    for case in args.cases:
        name, m = case.split(":")
        m = int(m)
        fn, make = CHAINS[name]
        x = make(m)
        fc = torch.compile(fn, dynamic=False)
        ref = fn(*x)
        got = fc(*x)
        err = float((got.float() - ref.float()).norm() / ref.float().norm())
        row = {"chain": name, "m": m, "compile_vs_eager_err": err, "eager_ms": [], "compile_ms": []}
        for r in range(args.repeat):  # interleaved, so drift hits both alike
            row["eager_ms"].append(peers.bench(lambda: fn(*x)))
            row["compile_ms"].append(peers.bench(lambda: fc(*x)))
            print(f"{name} {m}^3 repeat {r}: eager {row['eager_ms'][-1]:.4f} ms, compile {row['compile_ms'][-1]:.4f} ms",
                  flush=True)
        for k in ("eager_ms", "compile_ms"):
            v = sorted(row[k])
            row[k + "_median"] = v[len(v) // 2]
            print(f"{name} {m}^3 {k[:-3]}: median {v[len(v) // 2]:.4f} ms, min {v[0]:.4f}, max {v[-1]:.4f} "
                  f"({len(v)} do_bench medians)", flush=True)
        doc["results"].append(row)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(doc, fh, indent=1)


if __name__ == "__main__":
    main()
