"""The Python path's host time per call (not run by make check): the
chains of gpu_torch.py at their small (launch-bound) sizes, N calls each
of art(*inputs), and of art(*inputs, out=...) where outputs are passed.

On CPU (the default when FUSERUN_LIBCUDA names the fake libcuda, or with
--fake): a fake torch (fake_torch.py) and the fake driver, whose launches
cost next to nothing, so the time is the host's work alone: fuserun's
Python, ctypes, libfuserun's checks and recipe. On a GPU (--torch): real
torch tensors; the time per call is the host's as long as it exceeds the
kernels' (back-to-back calls, one synchronize at the end).

usage (repository root, after make):
    FUSERUN_LIBCUDA=build/rt/libfakecuda.so PYTHONPATH=python python3 python/tests/bench_overhead.py [--calls N]
    PYTHONPATH=python python3 python/tests/bench_overhead.py --torch     # on a GPU
    ... --parts: also what the pieces of add_rmsnorm's call cost alone (an
    output's allocation and release, a tensor's signature, the launch
    through ctypes), to say where a call's time goes"""
import argparse
import ctypes
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, ".."))
if "--pkg" in sys.argv:  # another copy of the package (a same-run baseline), before this one on the path
    sys.path.insert(0, os.path.abspath(sys.argv[sys.argv.index("--pkg") + 1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5, help="the best of this many rounds of --calls")
    ap.add_argument("--torch", action="store_true", help="real torch on a GPU")
    ap.add_argument("--fake", action="store_true", help="the fake torch and libcuda (the default without --torch)")
    ap.add_argument("--parts", action="store_true", help="also time the pieces of add_rmsnorm's call")
    ap.add_argument("--pkg", help="the directory holding the fuserun package to time (default: this one's)")
    a = ap.parse_args()
    if not a.torch:
        os.environ.setdefault("FUSERUN_LIBCUDA", os.path.join(os.getcwd(), "build/rt/libfakecuda.so"))
        import fake_torch
        sys.modules["torch"] = fake_torch
        torch = fake_torch
        sync = (lambda: None)
    else:
        import torch
        sync = torch.cuda.synchronize
    import fuserun
    dev = torch.device("cuda", 0)

    def t(*shape, dtype=None):
        return torch.empty(tuple(shape), dtype=dtype or torch.float32, device=dev)

    bf = torch.bfloat16
    chains = [
        ("softmax", "R=8,C=1000", lambda: [t(8, 1000)]),
        ("kl_divergence", "N=1000", lambda: [t(1000), t(1000)]),
        ("gemv_axpby_sum", "M=64,N=64", lambda: [t(64, 64), t(64), t(64), 0.5, 2.0]),
        ("add_rmsnorm", "R=4,C=1024", lambda: [t(4, 1024, dtype=bf), t(4, 1024, dtype=bf), t(1024, dtype=bf), 1e-5]),
        ("attention", "B=1,T=64,S=64,D=64", lambda: [t(1, 64, 64, dtype=bf), t(1, 64, 64, dtype=bf), t(1, 64, 64, dtype=bf), 0.125]),
    ]
    has_out = "out" in fuserun.Artifact.run.__code__.co_varnames

    def per_call(fn):
        best = float("inf")
        for _ in range(a.repeat):
            fn()
            sync()
            t0 = time.perf_counter()
            for _ in range(a.calls):
                fn()
            sync()
            best = min(best, (time.perf_counter() - t0) / a.calls * 1e6)
        return best

    print(f"{'chain':16s} {'sizes':20s} {'call us':>8s} {'out= us':>8s}   ({'fake torch, fake driver' if not a.torch else 'torch, ' + torch.cuda.get_device_name()}; best of {a.repeat} x {a.calls}; {os.path.dirname(fuserun.__file__)})")
    for name, sizes, make in chains:
        art = fuserun.load(os.path.join(os.environ.get("FUSERUN_GENERATED", "generated"), name + ".manifest"))
        inputs = make()
        outs = art(*inputs)
        us = per_call(lambda: art(*inputs))
        us_out = float("nan")
        if has_out:
            out = outs if isinstance(outs, tuple) else (outs,)
            us_out = per_call(lambda: art(*inputs, out=out))
        print(f"{name:16s} {sizes:20s} {us:8.2f} {us_out:8.2f}")
        art.close()
    if a.parts and hasattr(fuserun.Artifact, "_allocator"):  # (a package before it has not the pieces timed)
        parts(torch, fuserun, dev, per_call)


def parts(torch, fuserun, dev, per_call):
    """add_rmsnorm's call (R=4, C=1024) and its pieces, each alone."""
    bf = torch.bfloat16
    art = fuserun.load(os.path.join(os.environ.get("FUSERUN_GENERATED", "generated"), "add_rmsnorm.manifest"))
    x, res, w = (torch.empty(s, dtype=bf, device=dev) for s in ((4, 1024), (4, 1024), (1024,)))
    h, y = art(x, res, w, 1e-5)
    c = next(iter(art._calls.values()))
    shape, empty, run, args, n, stream = (4, 1024), torch.empty, art._fz_run, art._args, art._nargs, art._stream
    raw, at, key = art._fz_run_raw, ctypes.addressof(art._args), c.handle_value
    tmpl = torch.empty((), dtype=bf, device=dev).expand(shape)
    two = (2,) + shape
    pieces = [
        ("the call", lambda: art(x, res, w, 1e-5)),
        ("the call, out=", lambda: art(x, res, w, 1e-5, out=(h, y))),
        ("torch.empty(shape, dtype, device), released", lambda: empty(shape, dtype=bf, device=dev)),
        ("x.new_empty(shape), released", lambda: x.new_empty(shape)),
        ("torch.empty_like(x), released", lambda: torch.empty_like(x)),
        ("torch.empty_like(rank-0 expanded), released", lambda: torch.empty_like(tmpl)),
        ("two in one: empty((2,)+shape).unbind(0), released", lambda: empty(two, dtype=bf, device=dev).unbind(0)),
        ("a tensor's signature", lambda: (x.shape, x.dtype, x.device, x.is_contiguous())),
        ("a tensor's guard (dtype is, contiguous, device ==)", lambda: x.dtype is bf and x.is_contiguous() and x.device == dev),
        ("x.shape", lambda: x.shape),
        ("x.data_ptr()", x.data_ptr),
        ("the current stream's handle", stream),
        ("fz_call_run through ctypes, POINTER(Arg) prototype", lambda: run(c.handle, args, n, stream())),
        ("fz_call_run through ctypes, ints (the call's)", lambda: raw(key, at, n, stream())),
    ]
    print("\nadd_rmsnorm R=4,C=1024, each piece alone:")
    for name, fn in pieces:
        try:
            us = f"{per_call(fn):7.2f} us"
        except AttributeError:  # the fake torch has no new_empty, unbind
            us = "    n/a"
        print(f"  {name:52s} {us}")
    art.close()


if __name__ == "__main__":
    main()
