"""PyTorch beside specs/groupnorm.fuse (issue 21): group norm with a
per-channel scale and shift over x[N, G*CG, H, W], as an expert writes it
(F.group_norm) and as the textbook writes it (mean and variance over the
group's axes), eager and under torch.compile, f32, median of
triton.testing.do_bench (L2 flushed). Also the copy ceiling (a clone).
python3 bench/groupnorm_peers.py N,G,CG,HW ..."""
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench


def expert(x, gamma, beta, g, eps):
    return F.group_norm(x, g, gamma, beta, eps)


def textbook(x, gamma, beta, g, eps):
    n, c = x.shape[:2]
    xg = x.reshape(n, g, -1)
    mu = xg.mean(-1, keepdim=True)
    va = ((xg - mu) ** 2).mean(-1, keepdim=True)
    y = ((xg - mu) * torch.rsqrt(va + eps)).reshape(x.shape)
    return y * gamma.view(1, c, 1) + beta.view(1, c, 1)


ce, ct = torch.compile(expert), torch.compile(textbook)
big = torch.empty(1 << 28, device="cuda")
cp = do_bench(lambda: big.clone(), return_mode="median")
print(f"copy ceiling: {2 * big.numel() * 4 / (cp * 1e-3) / 1e9:.0f} GB/s", flush=True)
for arg in sys.argv[1:]:
    n, g, cg, hw = (int(v) for v in arg.split(","))
    x = torch.randn(n, g * cg, hw, device="cuda")
    gamma, beta = (torch.randn(g * cg, device="cuda") for _ in range(2))
    r = {}
    for name, f in (("eager", expert), ("compile", ce), ("textbook_eager", textbook), ("textbook_compile", ct)):
        r[name] = do_bench(lambda: f(x, gamma, beta, g, 1e-5), return_mode="median")
    ref = expert(x, gamma, beta, g, 1e-5)
    assert torch.allclose(ct(x, gamma, beta, g, 1e-5), ref, atol=1e-4)
    floor = 2 * x.numel() * 4 / (2 * big.numel() * 4 / cp)
    print(f"groupnorm N={n} G={g} CG={cg} HW={hw}: " + ", ".join(f"{k} {v:.4f} ms" for k, v in r.items()) +
          f", floor {floor:.4f} ms", flush=True)
