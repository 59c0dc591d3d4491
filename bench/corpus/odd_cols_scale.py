"""odd_cols_scale: y(r,h) = X(r, 2h+1) * w(h), a gather at an affine index (family: gather)."""
import torch

# 16384 x 8192 f32 = 512 MiB read (every other element used), 256 MiB written.
# H must be C // 2 (the spec's contract).
SIZES = [dict(R=16384, C=8192, H=4096), dict(R=4194304, C=64, H=32)]
CHECK = [dict(R=1, C=2, H=1), dict(R=7, C=13, H=6), dict(R=1031, C=4097, H=2048), dict(R=3, C=3, H=1)]


def torch_fn(inp):
    return (inp['X'][:, 1::2] * inp['w'],)
