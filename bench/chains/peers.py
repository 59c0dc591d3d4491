#!/usr/bin/env python3
"""torch eager and torch.compile on the chains of bench/chains/*.fuse, at the
sizes given: ms (triton do_bench median, rotating inputs so each call streams
at least 256 MB), one line per chain and size.
usage: python3 bench/chains/peers.py CHAIN:R,C ..."""
import sys
import torch
from triton.testing import do_bench

torch._dynamo.config.cache_size_limit = 1024
if hasattr(torch._dynamo.config, 'recompile_limit'):
    torch._dynamo.config.recompile_limit = 1024


def rownorm(X):
    return X / X.pow(2).sum(1, keepdim=True).sqrt()


def layernorm(X, eps=1e-5):
    mu = X.mean(1, keepdim=True)
    va = ((X - mu) ** 2).mean(1, keepdim=True)
    return (X - mu) * torch.rsqrt(va + eps)


def softmax(X):
    return torch.softmax(X, 1)


def crossentropy(X, y):
    return torch.nn.functional.cross_entropy(X, y, reduction='none')


LABELS = {'crossentropy'}  # chains that also take a label per row (zeros, as the spec's domain)


for arg in sys.argv[1:]:
    name, size = arg.split(':')
    R, C = map(int, size.split(','))
    nb = max(1, min(32, (256 << 20) // (R * C * 8)))
    xs = [torch.randn(R, C, device='cuda') for _ in range(nb)]
    extra = (torch.zeros(R, dtype=torch.long, device='cuda'),) if name in LABELS else ()
    f = globals()[name]
    torch._dynamo.reset()
    cf = torch.compile(f, dynamic=False)
    it = [0]

    def run(fn):
        def g():
            it[0] = (it[0] + 1) % nb
            return fn(xs[it[0]], *extra)
        return g
    e = do_bench(run(f), warmup=25, rep=100, return_mode='median')
    c = do_bench(run(cf), warmup=25, rep=100, return_mode='median')
    print('peer %s R=%d,C=%d eager=%.4fms compile=%.4fms' % (name, R, C, e, c), flush=True)
