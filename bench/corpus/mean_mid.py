"""mean_mid: y(b,d) = mean_t x(b,t,d), the middle axis of [B, T, D] (family: multi-axis)."""
import torch

# 64 x 2048 x 1024 f32 = 512 MiB read.
SIZES = [dict(B=64, T=2048, D=1024), dict(B=8, T=16384, D=1024)]
CHECK = [dict(B=1, T=1, D=1), dict(B=3, T=7, D=1023), dict(B=2, T=1031, D=5), dict(B=1, T=4099, D=33)]


def torch_fn(inp):
    return (inp['x'].mean(1),)
