import torch

SIZES = [dict(B=32, T=2048, C=2048), dict(B=8, T=512, C=1024)]
CHECK = [dict(B=1, T=1, C=1), dict(B=3, T=37, C=1001), dict(B=5, T=7, C=4100), dict(B=2, T=1009, C=3)]


def torch_fn(inp):
    return (inp['X'] + inp['P'] + inp['E'].unsqueeze(1),)
