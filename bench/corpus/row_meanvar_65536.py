"""row_meanvar_65536: per-row mean and biased variance over few very wide rows (family: row)."""
import torch

# 2048 rows x 65536 f32 = 512 MiB read; 256 rows = 64 MiB.
SIZES = [dict(R=2048, C=65536), dict(R=256, C=65536)]
CHECK = [dict(R=1, C=65536), dict(R=3, C=65537), dict(R=5, C=65521), dict(R=2, C=1)]


def torch_fn(inp):
    var, mean = torch.var_mean(inp['X'], 1, correction=0)
    return (mean, var)
