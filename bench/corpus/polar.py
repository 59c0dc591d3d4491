import torch

SIZES = [dict(N=1 << 25), dict(N=1 << 22)]
CHECK = [dict(N=1), dict(N=1000003), dict(N=1000004)]


def torch_fn(inp):
    x, y = inp['x'], inp['y']
    r = torch.hypot(x, y)
    return (r, x / r, y / r)
