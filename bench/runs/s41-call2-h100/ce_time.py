"""Issue 21: cross_entropy's torch.compile time, in one process, three
ways: do_bench (the corpus's: median, L2 cleared), CUDA events over 50
back-to-back calls (warm L2 is irrelevant: 512 MiB), and each kernel's
name. ncu under --set full had Triton's kernel at 323 us (SM at 1.59 GHz)
where the corpus's do_bench gave 0.1986 ms: which kernel is timed?"""
import torch, torch.nn.functional as F
from triton.testing import do_bench
R, C = 4096, 32768
X = torch.randn(R, C, device="cuda"); y = torch.randint(0, C, (R,), device="cuda", dtype=torch.int32)
fn = lambda X, y: F.cross_entropy(X, y.long(), reduction="none")
cf = torch.compile(fn, dynamic=False)
for _ in range(3): cf(X, y)
torch.cuda.synchronize()
print("do_bench compile median ms", do_bench(lambda: cf(X, y), warmup=25, rep=100, return_mode="median"))
print("do_bench eager median ms", do_bench(lambda: fn(X, y), warmup=25, rep=100, return_mode="median"))
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(50): cf(X, y)
e.record(); torch.cuda.synchronize()
print("events, 50 back-to-back compile calls: ms a call", s.elapsed_time(e) / 50)
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as p:
    for _ in range(5): cf(X, y)
    torch.cuda.synchronize()
print(p.key_averages().table(sort_by="cuda_time_total", row_limit=8))
