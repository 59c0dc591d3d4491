"""col_max_f16: mx(c) = max_n X(n,c), f16 in and out (family: outer)."""
import torch

# 256K x 1024 f16 = 512 MiB read.
SIZES = [dict(N=262144, C=1024), dict(N=1048576, C=64)]
CHECK = [dict(N=1, C=1024), dict(N=4099, C=1023), dict(N=7, C=3), dict(N=65537, C=1)]


def torch_fn(inp):
    return (inp['X'].amax(0),)
