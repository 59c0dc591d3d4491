import math

import torch

SIZES = [dict(N=1 << 25), dict(N=1 << 22)]
CHECK = [dict(N=1), dict(N=1000003), dict(N=1000004)]

_steps = {}


def _compiling():
    c = getattr(torch, 'compiler', None)
    if c is not None and hasattr(c, 'is_compiling'):
        return c.is_compiling()
    return torch._dynamo.is_compiling()


def adamw_ops(p, g, m, v, lr, beta1, beta2, eps, wd, t):
    """torch.optim.AdamW's single-tensor step, op by op (what torch.compile fuses)."""
    p.mul_(1 - lr * wd)
    m.mul_(beta1).add_(g, alpha=1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    bc1 = 1 - beta1 ** t
    bc2 = 1 - beta2 ** t
    denom = (v.sqrt() / math.sqrt(bc2)).add_(eps)
    if p.dtype == m.dtype:
        p.addcdiv_(m, denom, value=-lr / bc1)
    else:  # bf16 parameters, f32 moments: update in f32, round once
        p.copy_(p.float().addcdiv_(m, denom, value=-lr / bc1))
    return p, m, v


def torch_fn(inp):
    a = [inp[k] for k in ('p', 'g', 'm', 'v', 'lr', 'beta1', 'beta2', 'eps', 'wd', 't')]
    p, g, m, v, lr, beta1, beta2, eps, wd, t = a
    # eager: torch.optim.AdamW(fused=True)'s kernel, one launch; compiled: the
    # ops, which inductor fuses into one kernel of its own
    if not _compiling() and hasattr(torch, '_fused_adamw_') and p.dtype == m.dtype:
        key = (t, p.device)
        if key not in _steps:
            _steps[key] = torch.full((), t, dtype=torch.float32, device=p.device)
        torch._fused_adamw_([p], [g], [m], [v], [], [_steps[key]], lr=lr, beta1=beta1, beta2=beta2,
                            weight_decay=wd, eps=eps, amsgrad=False, maximize=False)
        return p, m, v
    return adamw_ops(*a)
