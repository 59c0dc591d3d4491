"""Issue 24: where add_rmsnorm's plain Python call spends its time on a GPU
(gpu_torch.py measured 18.8 us a call where bench_overhead.py measured 11 us
of host time). Prints host time and total time per call, whether calls
take the slow path, a cProfile of the loop, and the kernels' device time
from torch.profiler."""
import cProfile, gc, os, pstats, sys, time, io
sys.path.insert(0, "python")
import torch
import fuserun

def u(*shape, dtype=torch.float32):
    return (torch.rand(*shape, device="cuda") * 2 - 1).to(dtype)

def loop(fn, n=2000, rounds=5):
    best_h = best_t = float("inf")
    for _ in range(rounds):
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        best_h = min(best_h, (t1 - t0) / n * 1e6)
        best_t = min(best_t, (t2 - t0) / n * 1e6)
    return best_h, best_t

for name, make in [("add_rmsnorm", lambda: [u(4, 1024, dtype=torch.bfloat16), u(4, 1024, dtype=torch.bfloat16), u(1024, dtype=torch.bfloat16), 1e-5]),
                   ("softmax", lambda: [u(8, 1000)])]:
    art = fuserun.load(f"generated/{name}.manifest")
    inputs = make()
    got = art(*inputs)
    torch.cuda.synchronize()
    g = art.run.__globals__
    n_slow = [0]
    real_slow = g["slow"]
    def counting(*a, **k):
        n_slow[0] += 1
        return real_slow(*a, **k)
    g["slow"] = counting
    out = (got,) if torch.is_tensor(got) else got
    print(f"== {name}: calls cached {len(art._calls)}")
    for label, fn in [("plain", lambda: art(*inputs)), ("out=", lambda: art(*inputs, out=out))]:
        n_slow[0] = 0
        h, t = loop(fn)
        print(f"  {label:6s} host {h:6.2f} us  total {t:6.2f} us  slow-path calls {n_slow[0]}")
    gc.disable()
    h, t = loop(lambda: art(*inputs))
    gc.enable()
    print(f"  plain, gc off: host {h:6.2f} total {t:6.2f}")
    x0 = inputs[0]
    h, t = loop(lambda: x0 + x0)
    print(f"  torch x+x (one launch, one alloc): host {h:6.2f} total {t:6.2f}")
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(3000):
        art(*inputs)
    pr.disable()
    torch.cuda.synchronize()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(12)
    print("\n".join(s.getvalue().splitlines()[:30]))
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(300):
            art(*inputs)
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12))
    g["slow"] = real_slow
    art.close()
