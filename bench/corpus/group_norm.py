"""group_norm: F.group_norm of x viewed as [N, G, CG, HW], stats per (n, g) (family: multi-axis)."""
import torch
import torch.nn.functional as F

# 32 x 32 groups x 16 channels x 64*64 f32 = 256 MiB in, 256 MiB out.
SIZES = [dict(N=32, G=32, CG=16, HW=4096), dict(N=8, G=32, CG=40, HW=4096)]
CHECK = [dict(N=1, G=1, CG=1, HW=1), dict(N=2, G=3, CG=5, HW=49), dict(N=3, G=32, CG=4, HW=7),
         dict(N=1, G=4, CG=3, HW=1023)]


def make_inputs(sizes, device):
    N, G, CG, HW = sizes['N'], sizes['G'], sizes['CG'], sizes['HW']
    return {
        'x': torch.randn(N, G, CG, HW, device=device, dtype=torch.float32),
        'gamma': torch.randn(G, CG, device=device, dtype=torch.float32),
        'beta': torch.randn(G, CG, device=device, dtype=torch.float32),
        'eps': 1e-5,
    }


def torch_fn(inp):
    x = inp['x']
    N, G, CG, HW = x.shape
    y = F.group_norm(x.view(N, G * CG, HW), G, inp['gamma'].reshape(-1), inp['beta'].reshape(-1), inp['eps'])
    return (y.view(N, G, CG, HW),)
