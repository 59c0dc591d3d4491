import torch
import torch.nn.functional as F

SIZES = [dict(N=4096), dict(N=65536)]
CHECK = [dict(N=1), dict(N=3), dict(N=4099), dict(N=1000003)]


def torch_fn(inp):
    pred, target = inp['pred'], inp['target']
    return (F.mse_loss(pred, target), (pred - target).mul_(2.0 / pred.numel()))
