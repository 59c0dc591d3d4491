"""row_meanvar_1024: per-row mean and biased variance, rows of 1024 (family: row)."""
import torch

# 128K rows x 1024 f32 = 512 MiB read.
SIZES = [dict(R=131072, C=1024), dict(R=32768, C=1024)]
CHECK = [dict(R=1, C=1024), dict(R=7, C=1021), dict(R=257, C=1023), dict(R=5, C=1), dict(R=3, C=1025)]


def torch_fn(inp):
    var, mean = torch.var_mean(inp['X'], 1, correction=0)
    return (mean, var)
