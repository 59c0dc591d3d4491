import torch.nn.functional as F

SIZES = [dict(R=8192, H=8192), dict(R=4096, H=2816)]
CHECK = [dict(R=1, H=1), dict(R=37, H=1001), dict(R=5, H=4100), dict(R=1009, H=3)]


def torch_fn(inp):
    X = inp['X']  # [R, 2, H]: x.view(R, 2, H) of the up-projection's [R, 2H]
    return (F.silu(X[:, 0]) * X[:, 1],)
