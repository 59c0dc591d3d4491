"""Random valid chains beside the corpus (issue 21): the ones nobody wrote.

Each chain is written twice, as the corpus's are (bench/corpus/README.md): a
NAME.fuse as a user would write it from dsl/README.md, and a NAME.py with
SIZES, CHECK and the PyTorch an expert would write (the library call where
one exists: softmax, layer_norm, rms_norm, logsumexp; composed tensor ops
otherwise). The space drawn from: element types f32/f16/bf16; elementwise
maps with broadcasts along either axis and one or two outputs; row
reductions with one to three accumulators, alone or feeding a normalised
row (softmax-, layer- and RMS-norm-like) after an optional pointwise
prologue; reductions over the outer axis; reductions over the last axis of
a [N, G, K] tensor broadcast back. Widths include odd and prime ones.

  python3 bench/corpus/randchain.py --seed S --count N [--out bench/corpus]

writes rc_S_I.fuse and rc_S_I.py (I from 0); the corpus's build.sh, run.sh
and harness.py then take them by name like any chain (rc_* is not checked
in: .gitignore). The same seed writes the same chains.
"""
import argparse
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_DT = {'f32': 'torch.float32', 'f16': 'torch.float16', 'bf16': 'torch.bfloat16'}
# unary maps: (spec, torch), each safe on any float
UNARY = [('relu({})', 'torch.relu({})'), ('sigmoid({})', 'torch.sigmoid({})'), ('tanh({})', 'torch.tanh({})'),
         ('gelu({})', "F.gelu({}, approximate='tanh')"), ('({} * {})', '({} * {})'), ('abs({})', 'torch.abs({})')]
BINARY = [('({} + {})', '({} + {})'), ('({} * {})', '({} * {})'), ('({} - {})', '({} - {})'),
          ('max({}, {})', 'torch.maximum({}, {})')]
# widths: powers of two, model widths, odd and prime ones
WIDTHS = [768, 1000, 1024, 4096, 4097, 5000, 8192, 12289, 32000]


class Chain:
    def __init__(self, name, family):
        self.name, self.family = name, family
        self.params, self.outs, self.stages, self.torch = [], [], [], []
        self.sizes, self.check, self.doc = {}, [], ''

    def fuse(self):
        ins = ', '.join(self.params)
        outs = ', '.join(self.outs)
        body = '\n'.join('    stage %s%s { %s }' % (n, ' [reduction]' if red else '', s) for n, red, s in self.stages)
        return '# family: %s\n# %s (bench/corpus/randchain.py)\nfusion %s(%s) -> (%s) {\n%s\n}\n' % (
            self.family, self.doc, self.name, ins, outs, body)

    def py(self):
        lines = ['"""%s: %s (family: %s; bench/corpus/randchain.py)."""' % (self.name, self.doc, self.family),
                 'import torch', 'import torch.nn.functional as F', '',
                 'SIZES = [%s]' % ', '.join('dict(%s)' % ', '.join('%s=%d' % kv for kv in d.items()) for d in self.sizes),
                 'CHECK = [%s]' % ', '.join('dict(%s)' % ', '.join('%s=%d' % kv for kv in d.items()) for d in self.check),
                 '', '', 'def torch_fn(inp):']
        lines += ['    ' + t for t in self.torch]
        return '\n'.join(lines) + '\n'


def sizes_2d(rng, dt, name_r='R', name_c='C'):
    """a size that fills an H100 (about 2^26 elements f32, 2^27 16-bit) and a small one"""
    c = rng.choice(WIDTHS)
    total = (1 << 26) if dt == 'f32' else (1 << 27)
    return [{name_r: max(1, total // c), name_c: c}, {name_r: max(1, (total >> 3) // c), name_c: c}]


CHECK_2D = [dict(R=1, C=1), dict(R=37, C=1001), dict(R=5, C=40009), dict(R=1009, C=4)]


def unary_chain(rng, x_spec, x_torch, depth):
    s, t = x_spec, x_torch
    for _ in range(depth):
        us, ut = rng.choice(UNARY)
        s, t = us.format(s, s), ut.format(t, t)
    return s, t


def elementwise(rng, name, dt):
    c = Chain(name, 'elementwise')
    c.params = ['X: %s[R,C]' % dt]
    tx, s, t = "inp['X']", 'X(r,c)', "inp['X']"
    other = rng.choice(['Y', 'row', 'col', None])
    if other == 'Y':
        c.params.append('Y: %s[R,C]' % dt)
        bs, bt = rng.choice(BINARY)
        s, t = bs.format(s, 'Y(r,c)'), bt.format(t, "inp['Y']")
    elif other == 'row':  # one value a column, broadcast over rows
        c.family = 'broadcast'
        c.params.append('b: %s[C]' % dt)
        bs, bt = rng.choice(BINARY)
        s, t = bs.format(s, 'b(c)'), bt.format(t, "inp['b']")
    elif other == 'col':  # one value a row, broadcast along it
        c.family = 'broadcast'
        c.params.append('g: %s[R]' % dt)
        bs, bt = rng.choice(BINARY)
        s, t = bs.format(s, 'g(r)'), bt.format(t, "inp['g'][:, None]")
    s, t = unary_chain(rng, s, t, rng.randint(1, 2))
    c.outs = ['Z: %s[R,C]' % dt]
    c.stages = [('map', False, 'Z(r,c) = %s' % s)]
    c.torch = ['return (%s,)' % t]
    if rng.random() < 0.4:  # a second output from the same walk
        c.family = 'multi-output'
        s2, t2 = unary_chain(rng, 'X(r,c)', tx, 1)
        c.outs.append('W: %s[R,C]' % dt)
        c.stages.append(('second', False, 'W(r,c) = %s' % s2))
        c.torch = ['return (%s, %s)' % (t, t2)]
    c.doc = 'elementwise over [R, C], %s, %d output(s)%s' % (dt, len(c.outs), ', with %s' % other if other else '')
    c.sizes, c.check = sizes_2d(rng, dt), CHECK_2D
    return c


def row(rng, name, dt):
    kind = rng.choice(['softmax', 'layernorm', 'rmsnorm', 'stats', 'lse'])
    c = Chain(name, {'softmax': 'softmax', 'layernorm': 'norm', 'rmsnorm': 'norm'}.get(kind, 'row'))
    c.params = ['X: %s[R,C]' % dt]
    x, xt = 'X(r,c)', "inp['X']"
    if rng.random() < 0.3:  # a prologue: a residual or a scale before the row work
        c.params.append('Res: %s[R,C]' % dt)
        c.stages.append(('pre', False, 'h(r,c) = X(r,c) + Res(r,c)'))
        x, xt = 'h(r,c)', "(inp['X'] + inp['Res'])"
    if kind == 'softmax':
        c.stages += [('mx', True, 'm(r) max=! %s' % x), ('ex', False, 'e(r,c) = exp(%s - m(r))' % x),
                     ('sm', True, 's(r) +=! e(r,c)'), ('out', False, 'Y(r,c) = e(r,c) / s(r)')]
        c.outs, c.torch = ['Y: %s[R,C]' % dt], ['return (torch.softmax(%s, dim=-1),)' % xt]
    elif kind == 'lse':
        c.stages += [('mx', True, 'm(r) max=! %s' % x), ('sm', True, 's(r) +=! exp(%s - m(r))' % x),
                     ('out', False, 'lse(r) = m(r) + log(s(r))')]
        c.outs, c.torch = ['lse: %s[R]' % dt], ['return (torch.logsumexp(%s, dim=-1),)' % xt]
    elif kind == 'layernorm':
        c.params += ['w: %s[C]' % dt, 'bias: %s[C]' % dt, 'eps: f32 in [1e-6, 1e-5]']
        c.stages += [('mean', True, 'mu(r) +=! %s / C' % x), ('var', True, 'v(r) +=! (%s - mu(r)) * (%s - mu(r)) / C' % (x, x)),
                     ('out', False, 'Y(r,c) = (%s - mu(r)) * rsqrt(v(r) + eps) * w(c) + bias(c)' % x)]
        c.outs = ['Y: %s[R,C]' % dt]
        c.torch = ["x = %s" % xt, "return (F.layer_norm(x, (x.shape[-1],), inp['w'], inp['bias'], inp['eps']),)"]
    elif kind == 'rmsnorm':
        c.params += ['w: %s[C]' % dt, 'eps: f32 in [1e-6, 1e-5]']
        c.stages += [('ss', True, 'q(r) +=! %s * %s' % (x, x)), ('out', False, 'Y(r,c) = %s * rsqrt(q(r) / C + eps) * w(c)' % x)]
        c.outs = ['Y: %s[R,C]' % dt]
        c.torch = ["x = %s" % xt, "return (F.rms_norm(x, (x.shape[-1],), inp['w'], inp['eps']),)"]
    else:  # one to three statistics of each row
        picks = rng.sample([('sum', '{o}(r) +=! {x}', 'x.float().sum(-1)'), ('max', '{o}(r) max=! {x}', 'x.amax(-1)'),
                            ('min', '{o}(r) min=! {x}', 'x.amin(-1)'), ('sumsq', '{o}(r) +=! {x} * {x}', 'x.float().square().sum(-1)')],
                           rng.randint(1, 3))
        c.outs, rets = [], []
        for i, (nm, st, tt) in enumerate(picks):
            o = 'o%d' % i
            c.stages.append((nm, True, st.format(o=o, x=x)))
            c.outs.append('%s: f32[R]' % o)
            rets.append(tt + ('.float()' if nm in ('max', 'min') else ''))
        c.torch = ["x = %s" % xt, 'return (%s,)' % ', '.join(rets)]
    c.doc = '%s of each row over [R, C], %s%s' % (kind, dt, ', after a residual add' if 'Res' in ' '.join(c.params) else '')
    c.sizes, c.check = sizes_2d(rng, dt), CHECK_2D
    return c


def outer(rng, name, dt):
    c = Chain(name, 'outer')
    c.params = ['X: %s[N,C]' % dt]
    picks = rng.sample([('sum', 'o{i}(c) +=! X(n,c)', "x.float().sum(0)"), ('max', 'o{i}(c) max=! X(n,c)', 'x.amax(0).float()'),
                        ('mean', 'o{i}(c) +=! X(n,c) / N', 'x.float().mean(0)'),
                        ('sumsq', 'o{i}(c) +=! X(n,c) * X(n,c)', 'x.float().square().sum(0)')], rng.randint(1, 2))
    c.outs, rets = [], []
    for i, (nm, st, tt) in enumerate(picks):
        c.stages.append((nm, True, st.format(i=i)))
        c.outs.append('o%d: f32[C]' % i)
        rets.append(tt)
    c.torch = ["x = inp['X']", 'return (%s,)' % ', '.join(rets)]
    cw = rng.choice([256, 1000, 1024, 4096])
    total = (1 << 26) if dt == 'f32' else (1 << 27)
    c.sizes = [dict(N=total // cw, C=cw), dict(N=(total >> 3) // cw, C=cw)]
    c.check = [dict(N=1, C=1), dict(N=1001, C=37), dict(N=40009, C=5), dict(N=4, C=1009)]
    c.doc = '%s over the outer axis of [N, C], %s' % (' and '.join(p[0] for p in picks), dt)
    return c


def grouped(rng, name, dt):
    c = Chain(name, 'multi-axis')
    c.params = ['X: %s[N,G,K]' % dt, 'eps: f32 in [1e-6, 1e-5]']
    c.stages = [('mean', True, 'mu(n,g) +=! X(n,g,k) / K'), ('var', True, 'v(n,g) +=! (X(n,g,k) - mu(n,g)) * (X(n,g,k) - mu(n,g)) / K'),
                ('out', False, 'Y(n,g,k) = (X(n,g,k) - mu(n,g)) * rsqrt(v(n,g) + eps)')]
    c.outs = ['Y: %s[N,G,K]' % dt]
    c.torch = ["x = inp['X']", "xf = x.float()", "mu = xf.mean(-1, keepdim=True)",
               "return (((xf - mu) * torch.rsqrt(xf.var(-1, unbiased=False, keepdim=True) + inp['eps'])).to(x.dtype),)"]
    k = rng.choice([1000, 4096, 12544, 65536])
    total = (1 << 26) if dt == 'f32' else (1 << 27)
    c.sizes = [dict(N=max(1, total // (32 * k)), G=32, K=k), dict(N=max(1, (total >> 3) // (32 * k)), G=32, K=k)]
    c.check = [dict(N=1, G=1, K=1), dict(N=3, G=5, K=1001), dict(N=2, G=3, K=40009)]
    c.doc = 'statistics of each (n, g) over k of [N, G, K] broadcast back (a group norm without affine), %s' % dt
    return c


FAMILIES = [(elementwise, 3), (row, 4), (outer, 2), (grouped, 1)]


def make(seed, i):
    rng = random.Random('%d/%d' % (seed, i))
    fam = rng.choices([f for f, _ in FAMILIES], [w for _, w in FAMILIES])[0]
    dt = rng.choice(['f32', 'f16', 'bf16'])
    return fam(rng, 'rc_%d_%d' % (seed, i), dt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--count', type=int, default=10)
    ap.add_argument('--out', default=HERE)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.count):
        c = make(a.seed, i)
        with open(os.path.join(a.out, c.name + '.fuse'), 'w') as f:
            f.write(c.fuse())
        with open(os.path.join(a.out, c.name + '.py'), 'w') as f:
            f.write(c.py())
        print('%s: %s' % (c.name, c.doc))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
