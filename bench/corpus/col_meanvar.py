"""col_meanvar: per-column mean and biased variance of a tall matrix (family: outer)."""
import torch

# 65536 x 1024 f32 = 256 MiB (read twice by a two-pass plan).
SIZES = [dict(N=65536, C=1024), dict(N=262144, C=1024)]
CHECK = [dict(N=1, C=1024), dict(N=1009, C=7), dict(N=3, C=1031), dict(N=65537, C=3), dict(N=5, C=1)]


def torch_fn(inp):
    var, mean = torch.var_mean(inp['X'], 0, correction=0)
    return (mean, var)
