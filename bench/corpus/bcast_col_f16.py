import torch

SIZES = [dict(R=32768, C=4096), dict(R=8192, C=1024)]
CHECK = [dict(R=1, C=1), dict(R=37, C=1001), dict(R=1009, C=3), dict(R=5, C=4100)]


def torch_fn(inp):
    return (inp['X'] * inp['s'].unsqueeze(1),)
