"""PyTorch beside specs/add_rmsnorm.fuse (issue 21): the residual add and RMS
norm as a user writes it, eager and under torch.compile, bf16, median of
triton.testing.do_bench (L2 flushed). python3 bench/rownorm_peers.py R,C ..."""
import sys

import torch
from triton.testing import do_bench


def add_rmsnorm(x, res, w, eps):
    h = x + res
    hf = h.float()
    y = (hf * torch.rsqrt((hf * hf).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)
    return h, y


comp = torch.compile(add_rmsnorm)
for arg in sys.argv[1:]:
    r, c = (int(v) for v in arg.split(","))
    x, res = (torch.randn(r, c, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    w = torch.randn(c, device="cuda", dtype=torch.bfloat16)
    e = do_bench(lambda: add_rmsnorm(x, res, w, 1e-6), return_mode="median")
    t = do_bench(lambda: comp(x, res, w, 1e-6), return_mode="median")
    print(f"add_rmsnorm R={r} C={c}: eager {e:.4f} ms, torch.compile {t:.4f} ms, floor bytes {4 * r * c * 2}", flush=True)
