"""PyTorch eager and torch.compile for issue 25's products at 4096^3: tf32 matmul + bias
(allow_tf32, B as [K,N] and as nn.Linear's [N,K]) and the bf16 product + bias + relu in
each operand layout. Each timed three times with triton.testing.do_bench (cold L2,
median); the middle one is printed. Run where tests/gpu/validate.c times ours
(the GPU alone):

  python3 bench/layouts_peers.py [WAITFILE]

WAITFILE: compile everything, then wait until that file exists before timing (so the
compiles can overlap other work). bench/RESULTS.md has the figures.
"""
import os, sys, time, json
import torch
import torch.nn.functional as F
from triton.testing import do_bench
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.set_float32_matmul_precision("high")
dev = torch.device("cuda")
torch.manual_seed(1)
n = 4096
def uni(shape, dt=torch.float32): return (torch.rand(shape, device=dev) * 2 - 1).to(dt)
f32, bf = torch.float32, torch.bfloat16
cases = {
  "tf32 A@B+bias (B[K,N])": (lambda A, B, b: A @ B + b, (uni((n, n)), uni((n, n)), uni(n))),
  "tf32 F.linear X W^T+bias (W[N,K])": (lambda X, W, b: F.linear(X, W, b), (uni((n, n)), uni((n, n)), uni(n))),
  "bf16 relu(A@B+bias)": (lambda A, B, b: torch.relu(A @ B + b), (uni((n, n), bf), uni((n, n), bf), uni(n, bf))),
  "bf16 relu(A^T@B+bias) (A[K,M])": (lambda A, B, b: torch.relu(A.t() @ B + b), (uni((n, n), bf), uni((n, n), bf), uni(n, bf))),
  "bf16 relu(X@W^T+bias) (W[N,K])": (lambda X, W, b: torch.relu(X @ W.t() + b), (uni((n, n), bf), uni((n, n), bf), uni(n, bf))),
  "bf16 relu(A^T@W^T+bias)": (lambda A, W, b: torch.relu(A.t() @ W.t() + b), (uni((n, n), bf), uni((n, n), bf), uni(n, bf))),
}
comp = {}
for k, (fn, x) in cases.items():
    t = time.time()
    comp[k] = torch.compile(fn, dynamic=False)
    comp[k](*x); torch.cuda.synchronize()
    print(f"compiled {k} in {time.time() - t:.1f}s", flush=True)
# wait for the validations to leave the GPU
w = sys.argv[1] if len(sys.argv) > 1 else None
while w and not os.path.exists(w): time.sleep(0.5)
print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, flush=True)
for k, (fn, x) in cases.items():
    e, c = [], []
    for r in range(3):
        e.append(do_bench(lambda: fn(*x), warmup=25, rep=100, return_mode="median"))
        c.append(do_bench(lambda: comp[k](*x), warmup=25, rep=100, return_mode="median"))
    e.sort(), c.sort()
    tf = 2 * n ** 3 / (c[1] * 1e-3) / 1e12
    print(f"TORCH {k:40s} eager {e[1]:.4f} ms  compiled {c[1]:.4f} ms ({tf:.0f} TFLOP/s)  [eager {e}, compiled {c}]", flush=True)
