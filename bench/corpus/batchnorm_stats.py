"""batchnorm_stats: per-channel mean and biased variance over (n, h, w) of x[N, C, H, W] (family: multi-axis)."""
import torch

# 64 x 256 x 64 x 64 f32 = 256 MiB (read twice by a two-pass plan).
SIZES = [dict(N=64, C=256, H=64, W=64), dict(N=256, C=64, H=56, W=56)]
CHECK = [dict(N=1, C=1, H=1, W=1), dict(N=3, C=5, H=7, W=11), dict(N=2, C=37, H=13, W=13),
         dict(N=5, C=3, H=1, W=1),
         # rows wider than the registers (16384): streamed, the sum and squares in one walk
         dict(N=5, C=3, H=64, W=64), dict(N=3, C=2, H=97, W=101)]


def torch_fn(inp):
    var, mean = torch.var_mean(inp['x'], (0, 2, 3), correction=0)
    return (mean, var)
