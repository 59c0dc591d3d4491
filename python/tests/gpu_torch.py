"""On a GPU with torch (not run by make check): shipped fused chains called
on torch tensors through fuserun, against the same chain written in
PyTorch, in one process; then each call's overhead against `fuserun bench`
(the op list's time on the GPU, events around it).

For each chain and size: the outputs' worst error relative to the torch
chain's scale (tolerance per chain), torch's time, fuserun's time per call
(wall clock over R back-to-back calls, then a synchronize, the best of 5
such rounds: launch-bound when the kernels are short), fuserun bench's median, and the overhead =
per-call - bench (issue 24's bar: under 10 us); and the time per call
with the outputs passed (out=, nothing allocated). Exit 1 when a chain
mismatches or an overhead passes the bar. python/tests/bench_overhead.py
--torch times the host's work alone.

usage (repository root, after make):
    python3 python/tests/gpu_torch.py [--reps R] [--chains softmax,kl_divergence,...]
FUSERUN_LIB (default: the clone's lib/libfuserun.so) and bin/fuserun are used."""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch  # noqa: E402

import fuserun  # noqa: E402


def rmsnorm(x, res, w, eps):
    h = x + res
    hf = h.float()
    return h, (hf * torch.rsqrt((hf * hf).mean(dim=1, keepdim=True) + eps) * w.float()).to(torch.bfloat16)


def attention(Q, K, V, scale):
    s = torch.einsum("bmd,bnd->bmn", Q.float(), K.float()) * scale
    p = torch.softmax(s, dim=-1).to(torch.bfloat16)
    return torch.einsum("bmn,bnd->bmd", p.float(), V.float()).to(torch.bfloat16)


def u(*shape, lo=-1.0, hi=1.0, dtype=torch.float32):
    return (torch.rand(*shape, device="cuda") * (hi - lo) + lo).to(dtype)


# name: sizes for fuserun bench, inputs at those sizes, the torch chain, tolerance (relative to the outputs' scale)
CHAINS = {
    "softmax": [("R=8,C=1000", lambda: [u(8, 1000)]), ("R=8192,C=8192", lambda: [u(8192, 8192)])],
    "kl_divergence": [("N=1000", lambda: [u(1000, lo=0.1), u(1000, lo=0.1)]),
                      ("N=16777216", lambda: [u(1 << 24, lo=0.1), u(1 << 24, lo=0.1)])],
    "gemv_axpby_sum": [("M=64,N=64", lambda: [u(64, 64), u(64), u(64), 0.5, 2.0]),
                       ("M=8192,N=8192", lambda: [u(8192, 8192), u(8192), u(8192), 0.5, 2.0])],
    "add_rmsnorm": [("R=4,C=1024", lambda: [u(4, 1024, dtype=torch.bfloat16), u(4, 1024, dtype=torch.bfloat16),
                                            u(1024, dtype=torch.bfloat16), 1e-5]),
                    ("R=16384,C=4096", lambda: [u(16384, 4096, dtype=torch.bfloat16), u(16384, 4096, dtype=torch.bfloat16),
                                                u(4096, dtype=torch.bfloat16), 1e-5])],
    "attention": [("B=1,T=64,S=64,D=64", lambda: [u(1, 64, 64, dtype=torch.bfloat16), u(1, 64, 64, dtype=torch.bfloat16),
                                                  u(1, 64, 64, dtype=torch.bfloat16), 0.125]),
                  ("B=4,T=1024,S=1024,D=128", lambda: [u(4, 1024, 128, dtype=torch.bfloat16), u(4, 1024, 128, dtype=torch.bfloat16),
                                                       u(4, 1024, 128, dtype=torch.bfloat16), 128 ** -0.5])],
}
TORCH = {
    "softmax": (lambda X: torch.softmax(X, dim=1), 1e-5),
    "kl_divergence": (lambda q, p: (q * (q.log() - p.log())).sum(), 1e-4),
    "gemv_axpby_sum": (lambda A, x, z, a, b: (lambda y: (y, y.sum()))(a * (A @ x) + b * z), 1e-4),
    "add_rmsnorm": (rmsnorm, 2e-2),
    "attention": (attention, 2e-2),
}


def worst(got, want):
    got, want = (got,) if torch.is_tensor(got) else got, (want,) if torch.is_tensor(want) else want
    err = 0.0
    for g, w in zip(got, want):
        g, w = g.double(), w.double()
        scale = max(w.abs().max().item(), 1e-30)
        err = max(err, ((g - w).abs().max().item()) / scale)
    return err


def per_call_us(fn, reps, rounds=5):
    """The best of rounds of reps back-to-back calls (a round that another
    process or a collection interrupted says nothing about the call)."""
    best = float("inf")
    for _ in range(rounds):
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / reps * 1e6)
    return best


def bench_us(name, sizes):
    r = subprocess.run([os.environ.get("FUSERUN", "bin/fuserun"), "bench", name, "--size", sizes, "--reps", "200", "--json"],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"fuserun bench {name} --size {sizes}: {r.stderr.strip()}")
    return json.loads(r.stdout)["fused"]["median_ms"] * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--chains", default=",".join(CHAINS))
    a = ap.parse_args()
    torch.manual_seed(0)
    bad = 0
    print(f"{'chain':16s} {'sizes':24s} {'err/tol':>8s} {'torch us':>9s} {'fuserun us':>10s} {'out= us':>8s} {'bench us':>9s} "
          f"{'overhead us':>11s}")
    for name in a.chains.split(","):
        art = fuserun.load(f"generated/{name}.manifest")
        ref, tol = TORCH[name]
        for sizes, make in CHAINS[name]:
            inputs = make()
            got = art(*inputs)
            want = ref(*inputs)
            torch.cuda.synchronize()
            e = worst(got, want) / tol
            t_torch = per_call_us(lambda: ref(*inputs), max(10, a.reps // 10))
            t_fz = per_call_us(lambda: art(*inputs), a.reps)
            out = (got,) if torch.is_tensor(got) else got
            t_out = per_call_us(lambda: art(*inputs, out=out), a.reps)
            t_bench = bench_us(name, sizes)
            over = t_fz - t_bench
            flag = "" if e <= 1 and over < 10 else "   <- FAIL" + (" (mismatch)" if e > 1 else "") + (" (overhead)" if over >= 10 else "")
            bad += bool(flag)
            print(f"{name:16s} {sizes:24s} {e:8.3f} {t_torch:9.1f} {t_fz:10.1f} {t_out:8.1f} {t_bench:9.1f} {over:11.1f}{flag}")
        art.close()
    print("gpu_torch:", "all within tolerance and the overhead bar" if not bad else f"{bad} failing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
