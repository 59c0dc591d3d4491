"""row_sum_128: s(r) = sum_c X(r,c) over rows of 128 (family: row)."""
import torch

# 1M rows x 128 f32 = 512 MiB read.
SIZES = [dict(R=1048576, C=128), dict(R=262144, C=128)]
CHECK = [dict(R=1, C=128), dict(R=13, C=127), dict(R=1031, C=129), dict(R=5, C=1)]


def torch_fn(inp):
    return (inp['X'].sum(1),)
