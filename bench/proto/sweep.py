#!/usr/bin/env python3
"""Times the prototype shapes of bench/proto/shapes.cu beside PyTorch eager and
torch.compile, in one process on the same inputs, over a size sweep; checks
every prototype against float64 first (outputs poisoned with NaN).

usage: python3 bench/proto/sweep.py LIB.so OUT.json [--quick]

Timing: CUDA events around a batch of 10 calls, median of 30 batches after a
warm-up; inputs rotate among enough buffers that each batch streams at least
256 MB, so L2 does not flatter small sizes. Floor = bytes that must move /
copy bandwidth measured in the same run."""
import ctypes
import json
import math
import sys
import time

import torch

lib = ctypes.CDLL(sys.argv[1])
OUT = sys.argv[2]
QUICK = '--quick' in sys.argv
P = ctypes.c_void_p
LL = ctypes.c_longlong
I = ctypes.c_int
lib.softmax_reg_launch.argtypes = [P, P, LL, I, I, I, I, I]
lib.softmax_online_launch.argtypes = [P, P, LL, I, I]
lib.kl_launch.argtypes = [P, P, LL, P, P, P, I, I, I, I]
lib.sigmoid_launch.argtypes = [P, P, LL, I, I]
lib.bn_launch.argtypes = [P, P, P, P, P, ctypes.c_float, P, LL, I, I]
dev = torch.device('cuda')
torch.manual_seed(1)
results = {'meta': {'device': torch.cuda.get_device_name(), 'torch': torch.__version__,
                    'date': time.strftime('%Y-%m-%d', time.gmtime()),
                    'cuda': torch.version.cuda, 'triton': getattr(__import__('triton'), '__version__', '?')}, 'rows': []}


def save():
    json.dump(results, open(OUT, 'w'), indent=1)


def timeit(fn, nbuf):
    """fn(i) launches on buffer set i % nbuf"""
    for i in range(3):
        fn(i % nbuf)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    k = 0
    for _ in range(30):
        e0.record()
        for _ in range(10):
            fn(k % nbuf)
            k += 1
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) / 10)
    ts.sort()
    return ts[len(ts) // 2]


def copy_bw():
    x = torch.empty(1 << 28, device=dev)
    y = torch.empty_like(x)
    ms = timeit(lambda i: y.copy_(x), 1)
    return 2 * x.numel() * 4 / ms / 1e6  # GB/s


BW = copy_bw()
results['meta']['copy_gbs'] = BW
print('copy %.0f GB/s' % BW, flush=True)


def nbufs(bytes_per_set):
    return max(1, min(64, (256 << 20) // max(bytes_per_set, 1)))


torch._dynamo.config.cache_size_limit = 1024
if hasattr(torch._dynamo.config, 'recompile_limit'):
    torch._dynamo.config.recompile_limit = 1024


def compiled(f):
    # a fresh cache per size: one lambda's code object is shared by every
    # size, and past the recompile limit dynamo would silently run eager
    torch._dynamo.reset()
    return torch.compile(f, dynamic=False)


def row(kind, size, floor_bytes, cands, eager_ms, compile_ms, extra=None):
    floor_ms = floor_bytes / BW / 1e6
    best = min((c for c in cands if c.get('ms')), key=lambda c: c['ms'], default=None)
    r = dict(kind=kind, size=size, floor_ms=floor_ms, eager_ms=eager_ms, compile_ms=compile_ms, cands=cands)
    if extra:
        r.update(extra)
    results['rows'].append(r)
    save()
    if best:
        print('%-8s %-14s floor %.4f  best %-28s %.4f (%.0f%% of floor)  compile %.4f (%.0f%%)  eager %.4f  best/compile %.2f' % (
            kind, size, floor_ms, best['name'], best['ms'], 100 * floor_ms / best['ms'], compile_ms, 100 * floor_ms / compile_ms,
            eager_ms, best['ms'] / compile_ms), flush=True)


def err(y, ref):
    if torch.isnan(y).any():
        return float('inf')
    return ((y.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-3)).item()


# ---------------------------------------------------------------- row softmax
def softmax_cands(C):
    out = []
    for tpr in (8, 16, 32, 64, 128, 256, 512, 1024):
        for nv in (1, 2, 4, 8):
            cov = tpr * nv * 4
            if cov >= C and cov < 2 * C and (tpr, nv) in REG4:
                out.append(('reg', tpr, nv, 4, 1))
    if C >= 8192:
        out += [('online', 512), ('online', 1024)]
    if C == 8192:
        out += [('reg', 512, 4, 4, 0), ('reg', 512, 16, 1, 1)]  # precise exp; scalar loads
    return out


REG4 = {(8, 1), (16, 1), (32, 1), (32, 2), (32, 4), (32, 8), (64, 4), (128, 2), (128, 4), (128, 8), (256, 2), (256, 4),
        (256, 8), (512, 2), (512, 4), (512, 8), (1024, 2), (1024, 4), (1024, 8)}

widths = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
total = 1 << 26
if QUICK:
    widths = [128, 1024, 8192, 65536]
for C in widths:
    R = total // C
    nb = nbufs(R * C * 8)
    xs = [torch.randn(R, C, device=dev) * 3 for _ in range(nb)]
    ys = [torch.empty(R, C, device=dev) for _ in range(nb)]
    ref = torch.softmax(xs[0].double(), 1)
    cands = []
    for c in softmax_cands(C):
        name = '%s/%s' % (c[0], ','.join(map(str, c[1:])))
        if c[0] == 'reg':
            f = lambda i, c=c: lib.softmax_reg_launch(xs[i].data_ptr(), ys[i].data_ptr(), R, C, c[1], c[2], c[3], c[4])
        else:
            f = lambda i, c=c: lib.softmax_online_launch(xs[i].data_ptr(), ys[i].data_ptr(), R, C, c[1])
        ys[0].fill_(float('nan'))
        rc = f(0)
        torch.cuda.synchronize()
        e = err(ys[0], ref)
        ms = timeit(f, nb) if rc == 0 and e < 1e-4 else None
        cands.append(dict(name=name, rc=rc, err=e, ms=ms))
    sm = lambda x: torch.softmax(x, 1)
    cm = compiled(sm)
    eager = timeit(lambda i: sm(xs[i]), nb)
    comp = timeit(lambda i: cm(xs[i]), nb)
    row('softmax', '%dx%d' % (R, C), R * C * 8, cands, eager, comp)
    del xs, ys, ref

# ---------------------------------------------------------------- KL + sum
sizes = [10, 14, 18, 20, 22, 24, 26, 28] if not QUICK else [20, 26]
part = torch.zeros(132 * 16, dtype=torch.float64, device=dev)
cnt = torch.zeros(4, dtype=torch.int32, device=dev)
for lg in sizes:
    n = 1 << lg
    nb = nbufs(n * 8)
    qs = [torch.rand(n, device=dev) * 0.95 + 0.05 for _ in range(nb)]
    ps = [torch.rand(n, device=dev) * 0.95 + 0.05 for _ in range(nb)]
    outs = torch.empty(nb, device=dev)
    ref = (qs[0].double() * (qs[0].double().log() - ps[0].double().log())).sum()
    cands = []
    for blk, u, per, prec in ((256, 4, 4, 0), (256, 2, 8, 0), (512, 2, 4, 0), (512, 4, 2, 0), (1024, 2, 2, 0), (256, 4, 8, 0),
                              (512, 2, 4, 1), (512, 4, 2, 1)):
        f = lambda i, blk=blk, u=u, per=per, prec=prec: lib.kl_launch(qs[i].data_ptr(), ps[i].data_ptr(), n, part.data_ptr(), cnt.data_ptr(),
                                                                      outs.data_ptr() + 4 * i, blk, u, per, prec)
        outs.fill_(float('nan'))
        rc = f(0)
        torch.cuda.synchronize()
        e = abs(outs[0].item() - ref.item()) / max(abs(ref.item()), 1e-3)
        e = e if e == e else float('inf')
        ms = timeit(f, nb) if rc == 0 and e < 1e-4 else None
        cands.append(dict(name='kl/%d,%d,%d%s' % (blk, u, per, ',precise' if prec else ''), rc=rc, err=e, ms=ms))
    kl = lambda q, p: (q * (q.log() - p.log())).sum()
    ck = compiled(kl)
    eager = timeit(lambda i: kl(qs[i], ps[i]), nb)
    comp = timeit(lambda i: ck(qs[i], ps[i]), nb)
    row('kl', '2^%d' % lg, n * 8, cands, eager, comp)
    del qs, ps

# ---------------------------------------------------------------- sigmoid map
for lg in sizes:
    n = 1 << lg
    nb = nbufs(n * 8)
    xs = [torch.randn(n, device=dev) for _ in range(nb)]
    ys = [torch.empty(n, device=dev) for _ in range(nb)]
    ref = torch.sigmoid(xs[0].double())
    cands = []
    for u, per in ((1, 0), (2, 0), (4, 0), (1, 8), (2, 8), (4, 4), (4, 8), (2, 16)):
        f = lambda i, u=u, per=per: lib.sigmoid_launch(xs[i].data_ptr(), ys[i].data_ptr(), n, u, per)
        ys[0].fill_(float('nan'))
        rc = f(0)
        torch.cuda.synchronize()
        e = err(ys[0], ref)
        ms = timeit(f, nb) if rc == 0 and e < 1e-5 else None
        cands.append(dict(name='sigmoid/u%d,%s' % (u, 'grid=%d/SM' % per if per else 'full grid'), rc=rc, err=e, ms=ms))
    cs = compiled(torch.sigmoid)
    eager = timeit(lambda i: torch.sigmoid(xs[i]), nb)
    comp = timeit(lambda i: cs(xs[i]), nb)
    row('sigmoid', '2^%d' % lg, n * 8, cands, eager, comp)
    del xs, ys

# ---------------------------------------------------------------- batch norm
for B, C in ((65536, 1024), (16384, 4096), (1 << 20, 64)) if not QUICK else ((65536, 1024),):
    nb = nbufs(B * C * 8)
    xs = [torch.randn(B, C, device=dev) for _ in range(nb)]
    ys = [torch.empty(B, C, device=dev) for _ in range(nb)]
    mean, gamma, beta = (torch.randn(C, device=dev) for _ in range(3))
    var = torch.rand(C, device=dev) + 0.05
    eps = 1e-5
    ref = (xs[0].double() - mean.double()) * torch.rsqrt(var.double() + eps) * gamma.double() + beta.double()
    cands = []
    for rpt in (2, 4, 8, 16):
        f = lambda i, rpt=rpt: lib.bn_launch(xs[i].data_ptr(), mean.data_ptr(), var.data_ptr(), gamma.data_ptr(), beta.data_ptr(), eps,
                                             ys[i].data_ptr(), B, C, rpt)
        ys[0].fill_(float('nan'))
        rc = f(0)
        torch.cuda.synchronize()
        e = err(ys[0], ref)
        ms = timeit(f, nb) if rc == 0 and e < 1e-5 else None
        cands.append(dict(name='bn/rows%d' % rpt, rc=rc, err=e, ms=ms))
    bn = lambda x: (x - mean) * torch.rsqrt(var + eps) * gamma + beta
    cb = compiled(bn)
    eager = timeit(lambda i: bn(xs[i]), nb)
    comp = timeit(lambda i: cb(xs[i]), nb)
    row('bn', '%dx%d' % (B, C), B * C * 8, cands, eager, comp)
    del xs, ys
print('done', flush=True)
