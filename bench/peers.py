#!/usr/bin/env python3
"""PyTorch peers for the fusec chains: eager and torch.compile timings.

Every chain of specs/*.fuse is written in PyTorch the way the spec computes it,
run on fresh random inputs (fixed seed; the same distributions as
tests/gpu/validate.c: uniform in (-1, 1), or (0.05, 1) for q, p, var, pi),
and timed eager and under torch.compile (mode default, dynamic=False) with
triton.testing.do_bench(fn, warmup=25, rep=100, return_mode='median'), in ms.
The same run measures two ceilings: device-to-device copy bandwidth (a 1 GiB
clone, bytes read + written over time) and f16 matmul TFLOP/s at 8192^3.

usage: python3 bench/peers.py [--quick] [--only CHAIN[,CHAIN...]] [--out FILE]
                              [--no-compile] [--no-variants] [--no-ceilings]
                              [--device cuda|cpu] [--seed S] [--deadline-s S]

Output: a table on stdout, and --out (default bench/peers.json):
  {"meta": {...}, "ceilings": {...},
   "results": [{"chain", "size", "eager_ms", "compile_ms", "note", ...}, ...]}
A time that could not be had (failure, skip) is null in the JSON and 'n/a' or
'skipped' in the table; the note says why. The JSON is rewritten after every
row, so a run cut short keeps what it measured.
"""
import argparse
import json
import math
import os
import platform
import sys
import time
import traceback

T0 = time.perf_counter()


def log(*a):
    print(*a, flush=True)


def elapsed():
    return time.perf_counter() - T0


try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # pragma: no cover
    log(f"peers: torch is not importable: {e}")
    sys.exit(2)

try:
    import triton
    from triton.testing import do_bench as _triton_do_bench
except Exception:
    triton = None
    _triton_do_bench = None

K_TE = 4  # const K of transfer_entropy.fuse
DIGAMMA_K = 1.0 + 1.0 / 2 + 1.0 / 3 - 0.57721566490153286061  # digamma(4)

DEV = None  # torch.device, set in main


# ----------------------------------------------------------------------------
# timing


def sync():
    if DEV.type == "cuda":
        torch.cuda.synchronize()


def _fallback_bench(fn, warmup_ms=25.0, rep_ms=100.0):
    """Median of timed calls (cuda events on a GPU, wall clock otherwise)."""
    fn()
    sync()
    t = time.perf_counter()
    fn()
    sync()
    est = max((time.perf_counter() - t) * 1e3, 1e-3)
    for _ in range(max(1, int(warmup_ms / est))):
        fn()
    sync()
    n = max(3, min(1000, int(rep_ms / est)))
    times = []
    for _ in range(n):
        if DEV.type == "cuda":
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        else:
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return times[len(times) // 2]


def bench(fn):
    if DEV.type == "cuda" and _triton_do_bench is not None:
        try:
            return float(_triton_do_bench(fn, warmup=25, rep=100, return_mode="median"))
        except TypeError:  # an older triton without return_mode
            return float(_triton_do_bench(fn, warmup=25, rep=100, quantiles=[0.5]))
    return _fallback_bench(fn)


def bench_name():
    if DEV.type == "cuda" and _triton_do_bench is not None:
        return "triton.testing.do_bench(warmup=25, rep=100, return_mode='median')"
    return "fallback median timer (no triton or no GPU)"


# ----------------------------------------------------------------------------
# inputs


def uni(shape, lo=-1.0, hi=1.0, dtype=torch.float32):
    x = torch.rand(shape, device=DEV, dtype=torch.float32) * (hi - lo) + lo
    return x.to(dtype) if dtype != torch.float32 else x


def pos(shape):
    return uni(shape, 0.05, 1.0)


def scal():  # a scalar like validate.c's 0.5 + urand()
    return 0.5 + float(torch.rand(()).item())


# ----------------------------------------------------------------------------
# the chains, as the specs compute them


def kl_divergence(q, p):
    return torch.sum(q * (torch.log(q) - torch.log(p)))


def prediction_error(o, g, pi):
    e = o - g
    accuracy = pi * e * e
    total = torch.sum(accuracy)
    return e, accuracy, total


def belief_update(W, mu, o, pi, lr):
    g = W @ mu
    e = pi * (o - g)
    grad = W.t() @ e
    return mu + lr * grad


def gemv_axpby_sum(A, x, z, alpha, beta):
    y = alpha * (A @ x) + beta * z
    return y, torch.sum(y)


def softmax(X):
    return torch.softmax(X, dim=1)


def matmul_bias_relu(A, B, bias):
    return torch.relu(torch.addmm(bias, A, B))


def matmul_bias_gelu(A, B, bias):
    return F.gelu(torch.addmm(bias, A, B), approximate="tanh")


def matmul_bias_relu_act(A, B, bias):  # cuBLASLt bias+relu epilogue, one kernel
    return torch._addmm_activation(bias, A, B, use_gelu=False)


def matmul_bias_gelu_act(A, B, bias):  # cuBLASLt bias+gelu(tanh) epilogue, one kernel
    return torch._addmm_activation(bias, A, B, use_gelu=True)


def matmul_residual(A, B, s, bias, R):
    return R + F.gelu(s[:, None] * (A @ B) + bias, approximate="tanh")


def linear_bias_gelu(X, W, bias):  # W as nn.Linear keeps it, [out, in]
    return F.gelu(F.linear(X, W, bias), approximate="tanh")


def bmm_bias_relu(A, B, bias):
    return F.relu(torch.bmm(A, B) + bias)


def attn_scores(Q, Kt, scale):  # Q [Bt,M,D], Kt [Bt,N,D] as stored
    return scale * (Q @ Kt.transpose(-1, -2))


def batchnorm_inference(X, mean, var, gamma, beta, eps):
    return (X - mean) * torch.rsqrt(var + eps) * gamma + beta


def batchnorm_fbn(X, mean, var, gamma, beta, eps):
    return F.batch_norm(X, mean, var, gamma, beta, training=False, eps=eps)


def colstats(X):  # as specs/colstats.fuse: the mean, then the mean square deviation
    m = X.mean(0)
    return m, ((X - m) ** 2).mean(0)


def colstats_var_mean(X):  # one library call (Welford, one read of X)
    v, m = torch.var_mean(X, 0, correction=0)
    return m, v


def vector_add(x, y):
    return x + y


def relu(x):
    return torch.relu(x)


def sigmoid(x):
    return torch.sigmoid(x)


def tanh(x):
    return torch.tanh(x)


def te_dists(xn_c, xp_c, yp_c, xn, xp, yp):
    """|differences| of a chunk's rows against all points, per coordinate."""
    return ((xn_c[:, None] - xn[None, :]).abs(), (xp_c[:, None] - xp[None, :]).abs(),
            (yp_c[:, None] - yp[None, :]).abs())


def te_chunk(xn_c, xp_c, yp_c, xn, xp, yp):
    """KSG terms for the rows i of one chunk against all points j (max-norm).

    eps(i) is the K-th smallest joint distance to the other points: the
    (K+1)-th smallest over all j, since d(i,i) = 0 is always among the
    smallest (the multiset less one zero). A marginal count includes j = i
    exactly when 0 < eps(i), which is taken off again."""
    an, ax, ay = te_dists(xn_c, xp_c, yp_c, xn, xp, yp)
    d = torch.maximum(an, torch.maximum(ax, ay))
    eps = d.kthvalue(K_TE + 1, dim=1).values
    self_in = (eps > 0).to(torch.int64)
    e = eps[:, None]
    n_x = (ax < e).sum(1) - self_in
    n_xnx = (torch.maximum(an, ax) < e).sum(1) - self_in
    n_xy = (torch.maximum(ax, ay) < e).sum(1) - self_in
    dg = torch.special.digamma
    psi = dg((n_x + 1).double()) - dg((n_xnx + 1).double()) - dg((n_xy + 1).double())
    return psi.sum()


def te_chunk_expert(xn_c, xp_c, yp_c, xn, xp, yp):
    """te_chunk as an expert writes it (issue 28): no distance matrix kept
    for kthvalue. The joint distance is a function of the inputs that every
    reduction recomputes (compiled, Inductor fuses it into each), and the
    (K+1)-th smallest is found by K+1 rounds of amin above the previous
    minimum, its ties counted exactly, so eps is kthvalue's value."""
    def dists():
        return te_dists(xn_c, xp_c, yp_c, xn, xp, yp)

    def joint():
        an, ax, ay = dists()
        return torch.maximum(an, torch.maximum(ax, ay))
    inf = torch.full_like(xn_c, float("inf"))
    prev = torch.full_like(xn_c, -1.0)
    need = torch.full(xn_c.shape, K_TE + 1, dtype=torch.int64, device=xn_c.device)
    eps = inf
    found = torch.zeros(xn_c.shape, dtype=torch.bool, device=xn_c.device)
    for _ in range(K_TE + 1):
        d = joint()
        m = torch.where(d > prev[:, None], d, inf[:, None]).amin(1)
        c = (joint() == m[:, None]).sum(1)
        hit = ~found & (c >= need)
        eps = torch.where(hit, m, eps)
        found = found | hit
        need = need - c
        prev = m
    self_in = (eps > 0).to(torch.int64)
    e = eps[:, None]
    an, ax, ay = dists()
    n_x = (ax < e).sum(1) - self_in
    an, ax, ay = dists()
    n_xnx = (torch.maximum(an, ax) < e).sum(1) - self_in
    an, ax, ay = dists()
    n_xy = (torch.maximum(ax, ay) < e).sum(1) - self_in
    dg = torch.special.digamma
    psi = dg((n_x + 1).double()) - dg((n_xnx + 1).double()) - dg((n_xy + 1).double())
    return psi.sum()


def te_rows(n):
    """Rows per chunk: at most 2^28 pair distances (1 GiB of f32) a matrix."""
    return max(1, min(n, (1 << 28) // n))


def make_te(chunk_fn):
    def transfer_entropy(xn, xp, yp, nf):
        n = xn.shape[0]
        r = te_rows(n)
        total = None
        for s in range(0, n, r):
            part = chunk_fn(xn[s:s + r], xp[s:s + r], yp[s:s + r], xn, xp, yp)
            total = part if total is None else total + part
        return DIGAMMA_K + total / nf
    return transfer_entropy


def spike_burst(fired, row_ptr, col, w, v, decay, vth, vreset):
    fl = fired.long()
    starts = row_ptr[fl].long()
    counts = row_ptr[fl + 1].long() - starts
    seg_start = torch.cumsum(counts, 0) - counts          # where each fired row's run begins
    base = torch.repeat_interleave(starts - seg_start, counts)
    syn = base + torch.arange(base.numel(), device=base.device)  # synapse ids of all fired rows
    I = torch.zeros_like(v).index_add_(0, col[syn], w[syn])
    u = decay * v + I
    fire = u >= vth
    spikes = torch.nonzero(fire).squeeze(1)
    v_next = torch.where(fire, vreset, u)
    return v_next, spikes, spikes.numel()


def spike_burst_expert(fired, row_ptr, col, w, v, decay, vth, vreset, syn=100):
    """spike_burst as an expert writes it (issue 28): every neuron has the
    same out-degree syn (the network's rows are padded to it), so the fired
    rows' synapses are a [F, syn] block of ids, no repeat_interleave; the
    spike list by nonzero_static (size n, padded with -1) and its length as a
    tensor: no host synchronisation, one static graph (compiled, or captured)."""
    ids = (row_ptr[fired.long()].long()[:, None] + torch.arange(syn, device=v.device)[None, :]).reshape(-1)
    I = torch.zeros_like(v).index_add_(0, col[ids].long(), w[ids])
    u = decay * v + I
    fire = u >= vth
    spikes = torch.nonzero_static(fire, size=v.numel(), fill_value=-1).squeeze(1)
    v_next = torch.where(fire, vreset, u)
    return v_next, spikes, fire.sum()


# ----------------------------------------------------------------------------
# cases: (chain, size label, make inputs, callable builder, min bytes, flops)


class Case:
    def __init__(self, chain, size, make, fn, min_bytes=None, flops=None,
                 variant=False, eager_only=False, note="", build=None, tol=1e-3):
        self.chain, self.size, self.make, self.fn = chain, size, make, fn
        self.min_bytes, self.flops = min_bytes, flops
        self.variant, self.eager_only, self.note = variant, eager_only, note
        self.build = build or (lambda wrap, f=fn: wrap(f))  # wrap: identity or torch.compile
        self.tol = tol


def p2(n):
    e = int(round(math.log2(n)))
    return f"2^{e}" if (1 << e) == n else str(n)


def cases(quick):
    out = []
    V = 1 << (20 if quick else 26)
    out.append(Case("kl_divergence", p2(V), lambda V=V: (pos(V), pos(V)), kl_divergence, 2 * V * 4))
    out.append(Case("prediction_error", p2(V), lambda V=V: (uni(V), uni(V), pos(V)), prediction_error, 5 * V * 4))

    n = 1024 if quick else 8192
    out.append(Case("belief_update", f"{n}x{n}",
                    lambda n=n: (uni((n, n)), uni(n), uni(n), pos(n), 0.01), belief_update, n * n * 4,
                    4 * n * n))
    n2 = 1024 if quick else 16384
    out.append(Case("gemv_axpby_sum", f"{n2}x{n2}",
                    lambda n2=n2: (uni((n2, n2)), uni(n2), uni(n2), scal(), scal()), gemv_axpby_sum,
                    n2 * n2 * 4, 2 * n2 * n2))
    r = 1024 if quick else 8192
    out.append(Case("softmax", f"{r}x{r}", lambda r=r: (uni((r, r)),), softmax, 2 * r * r * 4))

    mm = [512, 256] if quick else [4096, 1024]
    for name, fn, act in (("matmul_bias_relu", matmul_bias_relu, matmul_bias_relu_act),
                          ("matmul_bias_gelu", matmul_bias_gelu, matmul_bias_gelu_act)):
        for m in mm:
            mk = (lambda m=m: (uni((m, m), dtype=torch.float16), uni((m, m), dtype=torch.float16),
                               uni(m, dtype=torch.float16)))
            out.append(Case(name, f"{m}^3 f16", mk, fn, 3 * m * m * 2, 2 * m ** 3,
                            note="addmm (bias in the cuBLAS epilogue) + activation", tol=1e-2))
            out.append(Case(name + "[_addmm_activation]", f"{m}^3 f16", mk, act, 3 * m * m * 2,
                            2 * m ** 3, variant=True, eager_only=True,
                            note="torch._addmm_activation: bias+act in the cuBLASLt epilogue", tol=1e-2))

    for m in ([512] if quick else [1024, 4096, 8192]):
        mk = (lambda m=m: (uni((m, m), dtype=torch.bfloat16), uni((m, m), dtype=torch.bfloat16),
                           uni(m, dtype=torch.bfloat16)))
        out.append(Case("matmul_bias_relu_bf16", f"{m}^3 bf16", mk, matmul_bias_relu, 3 * m * m * 2, 2 * m ** 3,
                        note="addmm (bias in the cuBLAS epilogue) + relu", tol=2e-2))
    for m in ([512] if quick else [4096]):
        mk = (lambda m=m: (uni((m, m), dtype=torch.bfloat16), uni((m, m), dtype=torch.bfloat16), uni(m),
                           uni(m, dtype=torch.bfloat16), uni((m, m), dtype=torch.bfloat16)))
        out.append(Case("matmul_residual", f"{m}^3 bf16", mk, matmul_residual, 4 * m * m * 2, 2 * m ** 3,
                        note="R + gelu(s * (A @ B) + bias)", tol=2e-2))

    for m in ([512] if quick else [1024, 4096, 8192]):
        mk = (lambda m=m: (uni((m, m), dtype=torch.bfloat16), uni((m, m), dtype=torch.bfloat16),
                           uni(m, dtype=torch.bfloat16)))
        out.append(Case("linear_bias_gelu", f"{m}^3 bf16", mk, linear_bias_gelu, 3 * m * m * 2, 2 * m ** 3,
                        note="F.linear (X W^T + bias) + gelu(tanh)", tol=2e-2))

    bt, m = (2, 256) if quick else (8, 2048)
    mk = (lambda bt=bt, m=m: (uni((bt, m, m), dtype=torch.bfloat16), uni((bt, m, m), dtype=torch.bfloat16),
                              uni(m, dtype=torch.bfloat16)))
    out.append(Case("bmm_bias_relu", f"{bt}x{m}^3 bf16", mk, bmm_bias_relu, 3 * bt * m * m * 2, 2 * bt * m ** 3,
                    note="relu(torch.bmm(A, B) + bias)", tol=2e-2))
    bt, m, d = (4, 256, 64) if quick else (32, 1024, 128)
    mk = (lambda bt=bt, m=m, d=d: (uni((bt, m, d), dtype=torch.float16), uni((bt, m, d), dtype=torch.float16),
                                   d ** -0.5))
    out.append(Case("attn_scores", f"{bt}x{m}x{m}x{d} f16", mk, attn_scores, 2 * bt * m * d * 2 + bt * m * m * 2,
                    2 * bt * m * m * d, note="scale * (Q @ K^T), K as stored [Bt,N,D]", tol=2e-2))

    te_sizes = [1024, 2048, 8192] if quick else [8192, 1 << 14, 1 << 16]
    for i, n in enumerate(te_sizes):
        te = Case("transfer_entropy", f"N={p2(n)}", lambda n=n: (uni(n), uni(n), uni(n), float(n)),
                 None, build=lambda wrap: make_te(wrap(te_chunk)),
                 note=f"K={K_TE}, max-norm, rows in chunks of {te_rows(n)}", tol=1e-9)
        te.te_n = n
        te.te_estimate_from = te_sizes[1] if i == 2 else None
        out.append(te)
        if i < 2:  # the expert's formulation (issue 28): the peer to beat
            out.append(Case("transfer_entropy[expert]", f"N={p2(n)}", lambda n=n: (uni(n), uni(n), uni(n), float(n)),
                            None, build=lambda wrap: make_te(wrap(te_chunk_expert)), variant=True,
                            note=f"K={K_TE}: distances recomputed in each reduction, K+1 smallest by amin rounds",
                            tol=1e-9))

    sp = [10000, 50000, 1 << 17] if quick else [100000, 500000, 1 << 20]
    for n in sp:
        f = max(1, n // 100)
        syn = 100

        def mk(n=n, f=f, syn=syn):
            row_ptr = (torch.arange(n + 1, device=DEV, dtype=torch.int64) * syn).to(torch.int32)
            col = torch.randint(0, n, (n * syn,), device=DEV, dtype=torch.int32)
            w = uni(n * syn, 0.02, 0.22)
            v = uni(n, 0.0, 1.0)  # about 1.5% fire: u = 0.9 v + I reaches 1 only with input
            fired = ((torch.arange(f, device=DEV, dtype=torch.int64) * (n // f) + 7) % n).to(torch.int32)
            return fired, row_ptr, col, w, v, 0.9, 1.0, 0.0
        out.append(Case("spike_burst", f"N={p2(n)},F={f},syn={syn}", mk, spike_burst,
                        note="repeat_interleave + index_add_ + nonzero (host syncs included)", tol=1e-5))
        out.append(Case("spike_burst[expert]", f"N={p2(n)},F={f},syn={syn}", mk,
                        lambda *a, syn=syn: spike_burst_expert(*a, syn=syn), variant=True,
                        note="fixed out-degree ids, index_add_, nonzero_static: no host sync", tol=1e-5))

    for name, fn in (("relu", relu), ("sigmoid", sigmoid), ("tanh", tanh)):
        out.append(Case(name, p2(V), lambda V=V: (uni(V),), fn, 2 * V * 4))
    out.append(Case("vector_add", p2(V), lambda V=V: (uni(V), uni(V)), vector_add, 3 * V * 4))

    b, c = (4096, 256) if quick else (65536, 1024)
    mkbn = (lambda b=b, c=c: (uni((b, c)), uni(c), pos(c), uni(c), uni(c), 1e-5))
    out.append(Case("batchnorm_inference", f"{b}x{c}", mkbn, batchnorm_inference, 2 * b * c * 4))
    out.append(Case("batchnorm_inference[F.batch_norm]", f"{b}x{c}", mkbn, batchnorm_fbn, 2 * b * c * 4,
                    variant=True, eager_only=True, note="F.batch_norm(training=False), one kernel"))
    mkcs = (lambda b=b, c=c: (uni((b, c)),))
    out.append(Case("colstats", f"{b}x{c}", mkcs, colstats, b * c * 4))
    out.append(Case("colstats[var_mean]", f"{b}x{c}", mkcs, colstats_var_mean, b * c * 4, variant=True,
                    note="torch.var_mean(X, 0): one read of X"))
    return out


# ----------------------------------------------------------------------------
# helpers


def flat(x):
    if isinstance(x, (tuple, list)):
        r = []
        for y in x:
            r.extend(flat(y))
        return r
    return [x]


def compare(a, b):
    """Worst normwise difference of the compiled outputs from the eager ones."""
    worst, notes = 0.0, []
    for x, y in zip(flat(a), flat(b)):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape:
                notes.append(f"shape {tuple(x.shape)} vs {tuple(y.shape)}")
                continue
            if not x.is_floating_point():
                if x.numel() and not torch.equal(x, y):
                    notes.append("integer outputs differ")
                continue
            ref = y.double() if x.numel() <= (1 << 22) else y.float()
            den = ref.abs().max().item() if ref.numel() else 0.0
            num = (x.to(ref.dtype) - ref).abs().max().item() if ref.numel() else 0.0
            worst = max(worst, num / den if den > 0 else num)
        elif isinstance(x, (int, float)) and isinstance(y, (int, float)):
            if isinstance(x, int) and x != y:
                notes.append(f"count {x} vs {y}")
            elif isinstance(x, float):
                worst = max(worst, abs(x - y) / max(abs(y), 1e-300))
    return worst, notes


def short(e):
    s = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
    return s[:160]


def fmt(ms, why):
    return f"{ms:.4f}" if isinstance(ms, float) else why


def free():
    if DEV.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


# ----------------------------------------------------------------------------


def ceilings(quick):
    out = {}
    try:
        nbytes = (64 << 20) if quick else (1 << 30)
        x = uni(nbytes // 4)
        t = bench(lambda: x.clone())
        out["copy_bytes_each_way"] = nbytes
        out["copy_ms"] = t
        out["copy_gbs"] = 2 * nbytes / (t * 1e-3) / 1e9
        out["copy_method"] = "x.clone() of a f32 tensor; GB/s = 2*bytes (read+write)/time, 1 GB = 1e9 B"
        del x
        free()
        log(f"[{elapsed():6.1f}s] ceiling copy: {nbytes / 2**30:.3f} GiB clone {t:.4f} ms -> {out['copy_gbs']:.1f} GB/s")
    except Exception as e:
        out["copy_error"] = short(e)
        log(f"ceiling copy failed: {short(e)}")
    try:
        n = (512 if DEV.type == "cpu" else 1024) if quick else 8192
        a = uni((n, n), dtype=torch.float16)
        b = uni((n, n), dtype=torch.float16)
        t = bench(lambda: a @ b)
        out["matmul_n"] = n
        out["matmul_ms"] = t
        out["f16_matmul_tflops"] = 2 * n ** 3 / (t * 1e-3) / 1e12
        log(f"[{elapsed():6.1f}s] ceiling f16 matmul {n}^3: {t:.4f} ms -> {out['f16_matmul_tflops']:.1f} TFLOP/s")
        a, b = a.to(torch.bfloat16), b.to(torch.bfloat16)
        t = bench(lambda: a @ b)
        out["bf16_matmul_tflops"] = 2 * n ** 3 / (t * 1e-3) / 1e12
        log(f"[{elapsed():6.1f}s] ceiling bf16 matmul {n}^3: {t:.4f} ms -> {out['bf16_matmul_tflops']:.1f} TFLOP/s")
        del a, b
        free()
    except Exception as e:
        out["matmul_error"] = short(e)
        log(f"ceiling matmul failed: {short(e)}")
    return out


def main():
    global DEV
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers.json"))
    ap.add_argument("--only", action="append", default=[],
                    help="chain name(s), comma separated or repeated; 'ceilings' for the ceilings alone")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--no-variants", action="store_true",
                    help="leave out the eager-only library variants (_addmm_activation, F.batch_norm)")
    ap.add_argument("--no-ceilings", action="store_true")
    ap.add_argument("--device", default=None)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--te-max-s", type=float, default=10.0,
                    help="skip the largest transfer-entropy size in a mode whose estimated call exceeds this")
    ap.add_argument("--deadline-s", type=float, default=540.0,
                    help="after this many seconds, the remaining rows are skipped (0: none)")
    args = ap.parse_args()

    DEV = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    only = {s.strip() for o in args.only for s in o.split(",") if s.strip()}

    for k in ("cache_size_limit", "recompile_limit"):
        if hasattr(torch._dynamo.config, k):
            setattr(torch._dynamo.config, k, 256)
    for k in ("accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, k):
            setattr(torch._dynamo.config, k, 4096)

    meta = {
        "device": torch.cuda.get_device_name(DEV) if DEV.type == "cuda" else platform.processor() or "cpu",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": getattr(triton, "__version__", None),
        "python": platform.python_version(),
        "timer": bench_name(),
        "compile": "torch.compile(fn, dynamic=False), mode default, one compiled fn per chain reused across sizes",
        "quick": args.quick,
        "seed": args.seed,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    log(f"peers: {meta['device']}, torch {meta['torch']}, cuda {meta['cuda']}, triton {meta['triton']}; "
        f"timer: {meta['timer']}")
    doc = {"meta": meta, "ceilings": {}, "results": []}

    def save():
        meta["wall_s"] = round(elapsed(), 1)
        os.makedirs(os.path.dirname(os.path.abspath(args.out)) or ".", exist_ok=True)
        tmp = args.out + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(doc, fh, indent=1)
        os.replace(tmp, args.out)

    if not args.no_ceilings and (not only or "ceilings" in only):
        doc["ceilings"] = ceilings(args.quick)
        save()

    compiled = {}

    def wrap_compile(f):
        if f not in compiled:
            compiled[f] = torch.compile(f, dynamic=False)
        return compiled[f]

    te_seen = {}  # te size -> (eager_ms, compile_ms)
    for idx, c in enumerate(cases(args.quick)):
        base = c.chain.split("[")[0]
        if only and c.chain not in only and base not in only:
            continue
        if c.variant and args.no_variants:
            continue
        row = {"chain": c.chain, "size": c.size, "eager_ms": None, "compile_ms": None, "note": ""}
        notes = [c.note] if c.note else []
        if args.deadline_s and elapsed() > args.deadline_s:
            row["note"] = f"skipped: past --deadline-s {args.deadline_s:g}"
            doc["results"].append(row)
            save()
            log(f"[{elapsed():6.1f}s] {c.chain} {c.size}: {row['note']}")
            continue
        # the largest transfer-entropy size: estimate from the one before it (O(N^2))
        skip_eager = skip_compile = False
        te_n = getattr(c, "te_n", None)
        if getattr(c, "te_estimate_from", None):
            prev = te_seen.get(c.te_estimate_from)
            scale = (te_n / c.te_estimate_from) ** 2
            if prev is None:
                skip_eager = skip_compile = True
                notes.append(f"skipped: N={p2(c.te_estimate_from)} was not measured to estimate from")
            else:
                for i, mode in enumerate(("eager", "compile")):
                    if prev[i] is None:
                        continue
                    est = prev[i] * scale / 1e3
                    if est > args.te_max_s:
                        notes.append(f"{mode} skipped: est {est:.1f} s/call from N={p2(c.te_estimate_from)}")
                        if i == 0:
                            skip_eager = True
                        else:
                            skip_compile = True
                    else:
                        notes.append(f"{mode} est {est:.2f} s/call")
        inputs = None
        try:
            torch.manual_seed(args.seed + idx)
            inputs = c.make()
            sync()
        except Exception as e:
            notes.append(f"inputs failed: {short(e)}")
            traceback.print_exc()
        out_e = out_c = None
        if inputs is not None and not skip_eager:
            try:
                fe = c.build(lambda f: f)
                out_e = fe(*inputs)
                sync()
                row["eager_ms"] = bench(lambda: fe(*inputs))
                if c.min_bytes:
                    row["eager_gbs"] = c.min_bytes / (row["eager_ms"] * 1e-3) / 1e9
                if c.flops:
                    row["eager_tflops"] = c.flops / (row["eager_ms"] * 1e-3) / 1e12
            except Exception as e:
                notes.append(f"eager failed: {short(e)}")
                traceback.print_exc()
                free()
        compile_skipped = args.no_compile or c.eager_only or skip_compile
        if inputs is not None and not compile_skipped:
            try:
                fc = c.build(wrap_compile)
                t = time.perf_counter()
                out_c = fc(*inputs)
                sync()
                row["compile_s"] = round(time.perf_counter() - t, 2)
                fc(*inputs)
                sync()
                row["compile_ms"] = bench(lambda: fc(*inputs))
                if c.min_bytes:
                    row["compile_gbs"] = c.min_bytes / (row["compile_ms"] * 1e-3) / 1e9
                if c.flops:
                    row["compile_tflops"] = c.flops / (row["compile_ms"] * 1e-3) / 1e12
                notes.append(f"first compiled call {row['compile_s']:.1f}s")
                if out_e is not None:
                    err, cn = compare(out_c, out_e)
                    row["compile_vs_eager"] = err
                    if err > c.tol:
                        notes.append(f"compiled differs from eager by {err:.2e} (normwise)")
                    notes.extend(cn)
            except Exception as e:
                notes.append(f"compile failed: {short(e)}")
                traceback.print_exc()
                free()
        elif c.eager_only:
            notes.append("eager-only variant")
        if te_n:
            te_seen[te_n] = (row["eager_ms"], row["compile_ms"])
            if out_e is not None:
                row["te"] = float(out_e)
        if c.chain == "transfer_entropy[expert]" and out_e is not None:
            row["te"] = float(out_e)
        if c.chain.startswith("spike_burst") and out_e is not None:
            row["nspikes"] = int(out_e[2])
        row["note"] = "; ".join(notes)
        doc["results"].append(row)
        save()
        log(f"[{elapsed():6.1f}s] {c.chain:36s} {c.size:26s} eager {fmt(row['eager_ms'], 'n/a'):>10s} "
            f"compile {fmt(row['compile_ms'], 'n/a'):>10s}  {row['note']}")
        del inputs, out_e, out_c
        free()

    # the table
    def cell(ms, mode, note):
        if isinstance(ms, float):
            return f"{ms:.4f}"
        return "skipped" if (f"{mode} skipped" in note or note.startswith("skipped")) else "n/a"

    log("")
    log(f"device: {meta['device']}   torch {meta['torch']}   timer: {meta['timer']}")
    ce = doc["ceilings"]
    if ce:
        log(f"ceilings: copy {ce.get('copy_gbs', float('nan')):.1f} GB/s "
            f"({ce.get('copy_bytes_each_way', 0) / 2**30:.3f} GiB clone, read+write), "
            f"f16 matmul {ce.get('f16_matmul_tflops', float('nan')):.1f} TFLOP/s at {ce.get('matmul_n')}^3")
    w1 = max([len(r["chain"]) for r in doc["results"]] + [5])
    w2 = max([len(r["size"]) for r in doc["results"]] + [4])
    log(f"{'chain':{w1}s}  {'size':{w2}s}  {'eager ms':>10s}  {'compile ms':>10s}  note")
    log("-" * (w1 + w2 + 30))
    for r in doc["results"]:
        log(f"{r['chain']:{w1}s}  {r['size']:{w2}s}  {cell(r['eager_ms'], 'eager', r['note']):>10s}  "
            f"{cell(r['compile_ms'], 'compile', r['note']):>10s}  {r['note']}")
    save()
    log(f"\nwrote {args.out} ({len(doc['results'])} rows) in {elapsed():.1f} s")


if __name__ == "__main__":
    main()
