"""Host time per call on CPU (fake torch, fake libcuda), two fuserun packages
in one process, rounds alternated so that both see the same load (this
machine's 2 cores are shared): the best of ROUNDS rounds of CALLS calls,
by thread CPU time (time.thread_time: another process's time is not
counted) and by wall time (perf_counter).

usage (repository root, after make lib/libfuserun.so build/rt/libfakecuda.so):
    python3 bench/runs/i24-2026-11-27/cpu_host.py BASE_PYTHON_DIR NEW_PYTHON_DIR [--profile]
--profile: also cProfile 20000 plain add_rmsnorm calls of each package."""
import importlib.util
import os
import sys
import time

root = os.getcwd()
os.environ.setdefault("FUSERUN_LIB", os.path.join(root, "lib/libfuserun.so"))
os.environ.setdefault("FUSERUN_LIBCUDA", os.path.join(root, "build/rt/libfakecuda.so"))
sys.path.insert(0, os.path.join(root, "python/tests"))
sys.path.insert(0, os.path.join(root, "python"))
import fake_torch as T  # noqa: E402 (its fuserun._lib import: this tree's)

sys.modules["torch"] = T
CALLS, ROUNDS = 20000, 15


def load_pkg(name, pydir):
    spec = importlib.util.spec_from_file_location(name, os.path.join(pydir, "fuserun", "__init__.py"),
                                                  submodule_search_locations=[os.path.join(pydir, "fuserun")])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def chains():
    dev = T.device("cuda", 0)

    def t(*shape, dtype=T.float32):
        return T.empty(tuple(shape), dtype, dev)
    bf = T.bfloat16
    return [("softmax", [t(8, 1000)]), ("kl_divergence", [t(1000), t(1000)]),
            ("gemv_axpby_sum", [t(64, 64), t(64), t(64), 0.5, 2.0]),
            ("add_rmsnorm", [t(4, 1024, dtype=bf), t(4, 1024, dtype=bf), t(1024, dtype=bf), 1e-5]),
            ("attention", [t(1, 64, 64, dtype=bf), t(1, 64, 64, dtype=bf), t(1, 64, 64, dtype=bf), 0.125])]


def one_round(fn):
    c0, w0 = time.thread_time(), time.perf_counter()
    for _ in range(CALLS):
        fn()
    return (time.thread_time() - c0) / CALLS * 1e6, (time.perf_counter() - w0) / CALLS * 1e6


def main():
    pkgs = [("base", load_pkg("fuserun_base", sys.argv[1])), ("new", load_pkg("fuserun_new", sys.argv[2]))]
    print(f"{'chain':16s} {'call':5s} " + " ".join(f"{n + ' cpu':>9s} {n + ' wall':>9s}" for n, _ in pkgs)
          + f"   (us a call, best of {ROUNDS} x {CALLS}, rounds alternated)")
    for name, inputs in chains():
        arts = [p.load(f"generated/{name}.manifest") for _, p in pkgs]
        outs = [a(*inputs) for a in arts]
        for kind in ("plain", "out="):
            fns = []
            for a, o in zip(arts, outs):
                o = o if isinstance(o, tuple) else (o,)
                fns.append((lambda a=a: a(*inputs)) if kind == "plain" else (lambda a=a, o=o: a(*inputs, out=o)))
            best = [[float("inf")] * 2 for _ in fns]
            for _ in range(ROUNDS):
                for b, fn in zip(best, fns):
                    cpu, wall = one_round(fn)
                    b[0], b[1] = min(b[0], cpu), min(b[1], wall)
            print(f"{name:16s} {kind:5s} " + " ".join(f"{b[0]:9.2f} {b[1]:9.2f}" for b in best))
        for a in arts:
            a.close()
    if "--profile" in sys.argv:
        profile(pkgs)


def profile(pkgs):
    import cProfile
    import pstats
    name, inputs = chains()[3]
    for label, p in pkgs:
        a = p.load(f"generated/{name}.manifest")
        a(*inputs)
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(20000):
            a(*inputs)
        pr.disable()
        print(f"\ncProfile, {label}: 20000 plain add_rmsnorm calls (R=4, C=1024)")
        pstats.Stats(pr).sort_stats("tottime").print_stats(8)
        a.close()


if __name__ == "__main__":
    main()
