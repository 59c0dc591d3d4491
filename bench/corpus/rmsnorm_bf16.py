import torch
import torch.nn.functional as F

SIZES = [dict(R=32768, C=4096), dict(R=65536, C=768)]
CHECK = [dict(R=1, C=1), dict(R=37, C=1001), dict(R=5, C=40000), dict(R=1009, C=4)]


def rms_norm(X, w, eps):
    if hasattr(F, 'rms_norm'):
        return F.rms_norm(X, (X.shape[-1],), w, eps)
    Xf = X.float()
    return (Xf * torch.rsqrt(Xf.pow(2).mean(-1, keepdim=True) + eps)).to(X.dtype) * w


def torch_fn(inp):
    return (rms_norm(inp['X'], inp['w'], inp['eps']),)
