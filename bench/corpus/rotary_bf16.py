"""rotary_bf16: rotary embedding, rotate-half layout, bf16 (family: gather)."""
import torch

# 16 x 32 heads x 2048 x 128 bf16 = 256 MiB in, 256 MiB out (tables 1 MiB).
SIZES = [dict(B=16, H=32, T=2048, D=128), dict(B=4, H=32, T=8192, D=64)]
# D must be even (the spec's partner is (d + D/2) % D)
CHECK = [dict(B=1, H=1, T=1, D=2), dict(B=2, H=3, T=7, D=64), dict(B=1, H=5, T=13, D=126),
         dict(B=3, H=1, T=1031, D=10),
         dict(B=2, H=2, T=5, D=12)]  # D/2 not a multiple of 4: no vector partner


def make_inputs(sizes, device):
    B, H, T, D = sizes['B'], sizes['H'], sizes['T'], sizes['D']
    inv = 1.0 / (10000.0 ** (torch.arange(0, D // 2, device=device, dtype=torch.float32) * 2.0 / D))
    ang = torch.arange(T, device=device, dtype=torch.float32)[:, None] * inv[None, :]
    ang = torch.cat((ang, ang), -1)
    return {
        'x': torch.randn(B, H, T, D, device=device, dtype=torch.bfloat16),
        'cos_t': ang.cos().to(torch.bfloat16),
        'sin_t': ang.sin().to(torch.bfloat16),
    }


def torch_fn(inp):
    x, c, s = inp['x'], inp['cos_t'], inp['sin_t']
    x1, x2 = x.chunk(2, -1)
    return (x * c + torch.cat((-x2, x1), -1) * s,)
