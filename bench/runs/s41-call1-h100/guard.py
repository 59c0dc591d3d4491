"""Issue 24: what each term of the call's guard costs on real torch (per
tensor): x.device == dev against x.get_device() == i and x.is_cuda."""
import time, torch
x = torch.empty(4, 1024, dtype=torch.bfloat16, device="cuda")
dev = torch.device("cuda", 0)
bf = torch.bfloat16
def t(f, n=200000):
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n): f()
        best = min(best, (time.perf_counter() - t0) / n * 1e9)
    return best
base = t(lambda: None)
for name, f in [("x.device == dev", lambda: x.device == dev), ("x.get_device() == 0", lambda: x.get_device() == 0),
                ("x.is_cuda", lambda: x.is_cuda), ("x.dtype is bf", lambda: x.dtype is bf),
                ("x.is_contiguous()", lambda: x.is_contiguous()), ("x.shape", lambda: x.shape),
                ("x.data_ptr()", lambda: x.data_ptr()), ("torch.empty_like(x)", lambda: torch.empty_like(x))]:
    print(f"guard: {name:24s} {t(f) - base:7.1f} ns")
