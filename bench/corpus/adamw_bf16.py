import math

import torch

SIZES = [dict(N=1 << 25), dict(N=1 << 22)]
CHECK = [dict(N=1), dict(N=1000003), dict(N=1000004)]


def torch_fn(inp):
    # bf16 parameters with f32 moments: torch's fused AdamW wants one dtype, so
    # an expert writes torch.optim.AdamW's single-tensor step op by op (what
    # torch.compile fuses), updating in f32 and rounding the parameters once
    p, g, m, v, lr, beta1, beta2, eps, wd, t = [inp[k] for k in ('p', 'g', 'm', 'v', 'lr', 'beta1', 'beta2', 'eps', 'wd', 't')]
    m.mul_(beta1).add_(g, alpha=1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    bc1 = 1 - beta1 ** t
    bc2 = 1 - beta2 ** t
    denom = (v.sqrt() / math.sqrt(bc2)).add_(eps)
    p.copy_(p.float().mul_(1 - lr * wd).addcdiv_(m, denom, value=-lr / bc1))
    return p, m, v
