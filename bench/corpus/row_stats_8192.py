"""row_stats_8192: per-row mean, biased variance and max, rows of 8192 (family: row)."""
import torch

# 16K rows x 8192 f32 = 512 MiB read.
SIZES = [dict(R=16384, C=8192), dict(R=4096, C=8192)]
CHECK = [dict(R=1, C=8192), dict(R=3, C=8191), dict(R=17, C=8193), dict(R=5, C=1), dict(R=2, C=24577)]


def torch_fn(inp):
    X = inp['X']
    var, mean = torch.var_mean(X, 1, correction=0)
    return (mean, var, X.amax(1))
