import torch

SIZES = [dict(N=1 << 25), dict(N=1 << 22)]
CHECK = [dict(N=1), dict(N=1000003), dict(N=1000004)]


def torch_fn(inp):
    # torch.optim.SGD's step (momentum, weight_decay, dampening 0), the new
    # parameters out of place as the spec returns them
    w, g, buf = inp['w'], inp['g'], inp['buf']
    buf.mul_(inp['mu']).add_(torch.add(g, w, alpha=inp['wd']))
    return (torch.add(w, buf, alpha=-inp['lr']), buf)
