"""instance_norm: F.instance_norm with affine of x[N, C, H, W] (family: multi-axis)."""
import torch
import torch.nn.functional as F

# 64 x 256 x 64 x 64 f32 = 256 MiB in, 256 MiB out.
SIZES = [dict(N=64, C=256, H=64, W=64), dict(N=16, C=64, H=128, W=128)]
CHECK = [dict(N=1, C=1, H=1, W=1), dict(N=2, C=3, H=7, W=9), dict(N=3, C=5, H=31, W=33),
         dict(N=1, C=7, H=1, W=101)]


def make_inputs(sizes, device):
    N, C, H, W = sizes['N'], sizes['C'], sizes['H'], sizes['W']
    return {
        'x': torch.randn(N, C, H, W, device=device, dtype=torch.float32),
        'weight': torch.randn(C, device=device, dtype=torch.float32),
        'bias': torch.randn(C, device=device, dtype=torch.float32),
        'eps': 1e-5,
    }


def torch_fn(inp):
    # (F.group_norm(x, C, weight, bias, eps) computes the same; instance_norm is the named op)
    return (F.instance_norm(inp['x'], weight=inp['weight'], bias=inp['bias'], eps=inp['eps']),)
