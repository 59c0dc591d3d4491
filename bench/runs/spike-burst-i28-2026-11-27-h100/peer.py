import sys, os, time, torch
sys.path.insert(0, 'bench')
import peers
peers.DEV = torch.device('cuda')
torch.manual_seed(1234)
n = 1 << 20; f = n // 100; syn = 100
DEV = peers.DEV
row_ptr = (torch.arange(n + 1, device=DEV, dtype=torch.int64) * syn).to(torch.int32)
col = torch.randint(0, n, (n * syn,), device=DEV, dtype=torch.int32)
w = peers.uni(n * syn, 0.02, 0.22)
v = peers.uni(n, 0.0, 1.0)
fired = ((torch.arange(f, device=DEV, dtype=torch.int64) * (n // f) + 7) % n).to(torch.int32)
args = (fired, row_ptr, col, w, v, 0.9, 1.0, 0.0)
fn = lambda *a: peers.spike_burst_expert(*a, syn=syn)
print("timer", peers.bench_name())
print("expert eager ms", peers.bench(lambda: fn(*args)), flush=True)
c = torch.compile(fn, dynamic=False)
c(*args); torch.cuda.synchronize()
print("expert compiled ms", peers.bench(lambda: c(*args)), flush=True)
try:
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): c(*args)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g): out = c(*args)
    print("expert compiled+graph ms", peers.bench(lambda: g.replay()), flush=True)
except Exception as e:
    print("graph failed", repr(e)[:200])
