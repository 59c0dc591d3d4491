"""row_sumsq_32: ss(r) = sum_c X(r,c)^2 over rows of 32 (family: row)."""
import torch

# 4M rows x 32 f32 = 512 MiB read; 1M rows = 128 MiB.
SIZES = [dict(R=4194304, C=32), dict(R=1048576, C=32)]
CHECK = [dict(R=1, C=32), dict(R=7, C=31), dict(R=1009, C=33), dict(R=3, C=1), dict(R=65537, C=32)]


def torch_fn(inp):
    X = inp['X']
    # one reduction kernel reading X once (X.pow(2).sum(1) writes X**2 first in eager)
    return (torch.linalg.vector_norm(X, 2, dim=1).square(),)
