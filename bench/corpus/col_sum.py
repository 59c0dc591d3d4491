"""col_sum: s(c) = sum_n X(n,c) of a 1048576 x 64 matrix (family: outer)."""
import torch

# 1M x 64 f32 = 256 MiB read; 4M x 64 = 1 GiB.
SIZES = [dict(N=1048576, C=64), dict(N=4194304, C=64)]
CHECK = [dict(N=1, C=64), dict(N=100003, C=63), dict(N=7, C=65), dict(N=4099, C=1)]


def torch_fn(inp):
    return (inp['X'].sum(0),)
