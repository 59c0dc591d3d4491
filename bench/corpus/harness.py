#!/usr/bin/env python3
"""The corpus's PyTorch side (bench/corpus/README.md has the contract).

For each chain NAME (bench/corpus/NAME.fuse + NAME.py) and each entry of its
SIZES, builds the inputs (NAME.make_inputs, or the default below), times
NAME.torch_fn eagerly and under torch.compile(dynamic=False) with
triton.testing.do_bench (median, warmup 25, rep 100; do_bench clears L2 before
each run) and writes one JSON line per chain and size. The first line holds
the copy bandwidth (a clone of a 1 GiB tensor, bytes read + written per s).
A chain that fails is recorded ("error") and the rest go on.

usage: harness.py [options] [NAME...]          (default: every chain)
  --out FILE       JSON lines (default: stdout)
  --gen DIR        the artifacts' folder, for the manifests (default bench/corpus/gen);
                   without a manifest the spec is read with `fusec --emit=ir`
  --fusec PATH     (default bin/fusec)
  --no-eager       time torch.compile only (no eager, no graph)
  --no-graph       do not time the eager chain replayed as a captured CUDA graph
  --no-compile     time eager only
  --budget S       stop starting new measurements after S seconds (the rest
                   are recorded as skipped)
  --precompile     compile every chain at every size once (no timing), so that
                   a later run finds inductor's caches warm; --jobs J processes
  --plan           print, without torch, one line per run the GPU script makes:
                   "NAME check K=V ..." (CHECK), "NAME time K=V ..." (SIZES),
                   "NAME error WHY" for a chain that breaks the contract
  --dry-run        without torch or a GPU: check every chain against the
                   contract and print what would be timed and the inputs it
                   would make; exit 1 if a chain breaks the contract
"""
import argparse
import importlib.util
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILIES = ('elementwise', 'multi-output', 'broadcast', 'optimizer', 'small', 'row', 'softmax', 'norm',
            'argmax', 'outer', 'multi-axis', 'gather', 'scan-free other')
ELEM_BYTES = {'f64': 8, 'f32': 4, 'f16': 2, 'bf16': 2, 'i32': 4, 'i64': 8}
CHECK_MAX_ELEMS = 1 << 24  # a CHECK size validates in seconds: no tensor above this


class Param:
    def __init__(self, name, kind, typ, dims, lo=None, hi=None):
        self.name, self.kind, self.type, self.dims = name, kind, typ, dims
        self.lo, self.hi = lo, hi          # domain
        self.values = None                 # (lo_expr, hi_expr, nondecreasing) from the manifest

    def numel(self, sizes):
        n = 1
        for d in self.dims:
            n *= sizes[d] if d in sizes else int(d)
        return n


class Spec:
    def __init__(self, name):
        self.name, self.sizes, self.params, self.family, self.fusions, self.outputs = name, [], [], None, [], []


def _spec_text(name):
    with open(os.path.join(HERE, name + '.fuse')) as f:
        return f.read()


def _strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'#[^\n]*', '', text)


def output_order(text):
    """The names in the fusion's '-> ( ... )', in order (outputs have no domains,
    so the parentheses balance)."""
    t = _strip_comments(text)
    i = t.find('->')
    if i < 0:
        return []
    j = t.index('(', i)
    depth, k = 0, j
    while k < len(t):
        depth += {'(': 1, ')': -1, '[': 1, ']': -1}.get(t[k], 0)
        if depth == 0:
            break
        k += 1
    body, names, depth, cur = t[j + 1:k], [], 0, ''
    for ch in body + ',':
        if ch == ',' and depth == 0:
            if cur.strip():
                names.append(cur.split(':')[0].strip())
            cur = ''
            continue
        depth += {'[': 1, ']': -1}.get(ch, 0)
        cur += ch
    return names


def read_spec(name, gen, fusec):
    """Sizes and parameters: from gen/NAME.manifest if there, else fusec --emit=ir."""
    s = Spec(name)
    text = _spec_text(name)
    first = text.split('\n', 1)[0]
    m = re.match(r'#\s*family:\s*(.+?)\s*$', first)
    s.family = m.group(1) if m else None
    s.fusions = re.findall(r'^\s*fusion\s+([A-Za-z_][A-Za-z0-9_]*)', _strip_comments(text), flags=re.M)
    s.outputs = output_order(text)
    man = os.path.join(gen, name + '.manifest') if gen else ''
    if man and os.path.exists(man):
        for line in open(man):
            w = line.split()
            if not w:
                continue
            if w[0] == 'size':
                s.sizes.append(w[1])
            elif w[0] == 'param' and w[2] in ('input', 'inout', 'output'):
                p = Param(w[1], w[2], w[3], [] if w[4] == '-' else w[4].split(','))
                d = re.search(r' domain=(\S+?)\.\.(\S+)', line)
                if d:
                    p.lo, p.hi = float(d.group(1)), float(d.group(2))
                s.params.append(p)
            elif w[0] == 'values':
                for p in s.params:
                    if p.name == w[1]:
                        lo, hi = w[2].split('..')
                        p.values = (lo, hi, 'nondecreasing' in w[3:])
        return s
    r = subprocess.run([fusec, '--emit=ir', os.path.join(HERE, name + '.fuse')], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError('fusec --emit=ir failed: ' + r.stderr.strip().split('\n')[0])
    for line in r.stdout.split('\n'):
        m = re.match(r'  sizes:(.*)$', line)
        if m:
            s.sizes = m.group(1).split()
        m = re.match(r'  (input|inout|output)\s+(\w+): (\w+)(?:\[([^\]]*)\])?(?:\s+in [\[(]([-0-9.eE+]+), ([-0-9.eE+]+)[\])])?', line)
        if m:
            p = Param(m.group(2), m.group(1), m.group(3), m.group(4).split(',') if m.group(4) else [])
            if m.group(5):
                p.lo, p.hi = float(m.group(5)), float(m.group(6))
            s.params.append(p)
    return s


class _Stub(types.ModuleType):
    """Stands in for torch where there is none: attributes are stubs too."""

    def __getattr__(self, k):
        if k.startswith('__'):
            raise AttributeError(k)
        return _Stub(self.__name__ + '.' + k)

    def __call__(self, *a, **k):
        return _Stub(self.__name__ + '()')


def stub_torch():
    if 'torch' in sys.modules:
        return
    for n in ('torch', 'torch.nn', 'torch.nn.functional', 'triton', 'triton.testing'):
        sys.modules[n] = _Stub(n)


def load_chain(name):
    spec = importlib.util.spec_from_file_location('corpus_' + name, os.path.join(HERE, name + '.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if os.environ.get('CORPUS_HEADLINE') and isinstance(getattr(mod, 'SIZES', None), list):
        mod.SIZES = mod.SIZES[:1]  # the headline size only (run.sh HEADLINE=1)
    return mod


def contract_errors(s, mod):
    """What breaks bench/corpus/README.md's contract, as strings."""
    err = []
    if s.family not in FAMILIES:
        err.append("first line is not '# family: F' with F one of %s" % ', '.join(FAMILIES))
    if s.fusions != [s.name]:
        err.append('expected exactly fusion %s, found %s' % (s.name, s.fusions))
    if not callable(getattr(mod, 'torch_fn', None)):
        err.append('no torch_fn')
    want = set(s.sizes)
    for key in ('SIZES', 'CHECK'):
        lst = getattr(mod, key, None)
        if not isinstance(lst, list) or not lst:
            err.append('%s is not a non-empty list' % key)
            continue
        for d in lst:
            if not isinstance(d, dict) or set(d) != want:
                err.append('%s entry %r does not bind exactly the sizes %s' % (key, d, ' '.join(s.sizes)))
            elif not all(isinstance(v, int) and v > 0 for v in d.values()):
                err.append('%s entry %r: sizes must be positive integers' % (key, d))
            elif key == 'CHECK':
                big = [p.name for p in s.params if p.dims and p.numel(d) > CHECK_MAX_ELEMS]
                if big:
                    err.append('CHECK entry %r is too large to validate quickly (%s)' % (d, ', '.join(big)))
    outs = [p.name for p in s.params if p.kind in ('output', 'inout')]
    if s.outputs and sorted(s.outputs) != sorted(outs):
        err.append('outputs %s, parameters say %s' % (s.outputs, outs))
    if hasattr(mod, 'make_inputs') and not callable(mod.make_inputs):
        err.append('make_inputs is not a function')
    return err


def traffic_bytes(s, sizes):
    """Bytes of every input and output tensor (an in-place one twice: read and written)."""
    b = 0
    for p in s.params:
        if p.dims:
            b += p.numel(sizes) * ELEM_BYTES[p.type] * (2 if p.kind == 'inout' else 1)
    return b


def _eval_size(expr, sizes):
    """A manifest bound: an integer, a size, or SIZE-K / SIZE+K."""
    m = re.match(r'^([A-Za-z_]\w*)?([-+]?\d+)?$', expr)
    if not m:
        raise ValueError('bound ' + expr)
    return (sizes[m.group(1)] if m.group(1) else 0) + (int(m.group(2)) if m.group(2) else 0)


def scalar_default(p):
    """A scalar input: the middle of its domain, else by name (eps, lr: what a
    model would pass; the peers' timing only, never a validation input), else 0.75. Fixed, not drawn: torch.compile(dynamic=False)
    specialises on scalars, and the warm-up (--precompile) must make the graph
    the timing run looks up."""
    if p.lo is not None:
        v = 0.5 * (p.lo + p.hi)
        return int(math.floor(v)) if p.type[0] == 'i' else v
    if p.name == 'eps':
        return 1e-5
    if p.name == 'lr':
        return 0.01
    return 0.75 if p.type[0] == 'f' or p.type == 'bf16' else 1


def input_plan(s, sizes):
    """How each input is made, as text (the dry run prints it)."""
    out = []
    for p in s.params:
        if p.kind not in ('input', 'inout'):
            continue
        shape = [sizes[d] if d in sizes else int(d) for d in p.dims]
        if not p.dims:
            how = '= %g' % scalar_default(p)
        elif p.type[0] == 'i':
            how = 'values %s..%s' % p.values[:2] if p.values else 'domain' if p.lo is not None else 'randint 0..99'
        else:
            how = 'rand in [%g, %g]' % (p.lo, p.hi) if p.lo is not None else 'randn'
        out.append('%s %s%s %s' % (p.name, p.type, shape, how))
    return out


def default_inputs(s, sizes, device):
    import torch
    dt = {'f64': torch.float64, 'f32': torch.float32, 'f16': torch.float16, 'bf16': torch.bfloat16,
          'i32': torch.int32, 'i64': torch.int64}
    inp = {}
    for p in s.params:
        if p.kind not in ('input', 'inout'):
            continue
        if not p.dims:
            inp[p.name] = scalar_default(p)
            continue
        shape = [sizes[d] if d in sizes else int(d) for d in p.dims]
        if p.type[0] == 'i':
            if p.values:
                lo, hi = _eval_size(p.values[0], sizes), _eval_size(p.values[1], sizes)
            elif p.lo is not None:
                lo, hi = int(p.lo), int(p.hi)
            else:
                lo, hi = 0, 99
            t = torch.randint(lo, max(lo, hi) + 1, shape, device=device, dtype=torch.int64)
            if p.values and p.values[2]:
                t = t.flatten().sort().values.reshape(shape)
            inp[p.name] = t.to(dt[p.type])
        elif p.lo is not None:
            inp[p.name] = (torch.rand(shape, device=device, dtype=torch.float32) * (p.hi - p.lo) + p.lo).to(dt[p.type])
        else:
            inp[p.name] = torch.randn(shape, device=device, dtype=dt[p.type])
    return inp


def size_text(d):
    return ' '.join('%s=%d' % kv for kv in d.items())


def chains(names):
    if names:
        return names
    return sorted(f[:-5] for f in os.listdir(HERE) if f.endswith('.fuse'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('names', nargs='*')
    ap.add_argument('--out')
    ap.add_argument('--gen', default=os.path.join(HERE, 'gen'))
    ap.add_argument('--fusec', default=os.path.join(HERE, '..', '..', 'bin', 'fusec'))
    ap.add_argument('--no-eager', action='store_true')
    ap.add_argument('--no-graph', action='store_true')
    ap.add_argument('--no-compile', action='store_true')
    ap.add_argument('--budget', type=float, default=0)
    ap.add_argument('--precompile', action='store_true')
    ap.add_argument('--jobs', type=int, default=4)
    ap.add_argument('--plan', action='store_true')
    ap.add_argument('--dry-run', action='store_true')
    a = ap.parse_args()
    names = chains(a.names)
    if a.plan or a.dry_run:
        stub_torch()
        return plan(a, names)
    if a.precompile:
        return precompile(a, names)
    return timing(a, names)


def plan(a, names):
    bad = 0
    for n in names:
        try:
            s = read_spec(n, a.gen, a.fusec)
            mod = load_chain(n)
            err = contract_errors(s, mod)
        except Exception as e:  # a chain that cannot even be read
            err, s, mod = ['%s: %s' % (type(e).__name__, e)], None, None
        if err:
            bad += 1
            for e in err:
                print('%s error %s' % (n, e))
            continue
        if a.plan:
            for d in mod.CHECK:
                print('%s check %s' % (n, size_text(d)))
            for d in mod.SIZES:
                print('%s time %s' % (n, size_text(d)))
            continue
        for d in mod.SIZES:
            what = [w for w, off in (('eager', a.no_eager), ('graph', a.no_eager or a.no_graph), ('compile', a.no_compile)) if not off]
            print('%s [%s] %s: %s, %.1f MiB; inputs: %s' % (n, s.family, size_text(d), '+'.join(what),
                                                          traffic_bytes(s, d) / 2 ** 20,
                                                          '; '.join(input_plan(s, d))))
    if a.dry_run:
        print('corpus dry run: %d chains, %d break the contract' % (len(names), bad))
    return 1 if bad and a.dry_run else 0


def precompile(a, names):
    """--jobs worker processes, each compiling its share once at every size."""
    if a.jobs > 1 and len(names) > 1:
        procs = []
        for j in range(a.jobs):
            share = names[j::a.jobs]
            if share:
                cmd = [sys.executable, os.path.abspath(__file__), '--precompile', '--jobs', '1', '--gen', a.gen,
                       '--fusec', a.fusec] + (['--budget', str(a.budget)] if a.budget else []) + share
                procs.append(subprocess.Popen(cmd))

        def stop(*_):  # timeout(1) stops this process: its workers too
            for p in procs:
                p.terminate()
            sys.exit(124)
        signal.signal(signal.SIGTERM, stop)
        return max(p.wait() for p in procs)
    import torch
    _dynamo_limits(torch)
    t0 = time.time()
    for n in names:
        for_each_size(a, n, t0, lambda s, d, fn, inp, r: _sync(torch, torch.compile(fn, dynamic=False)(inp)), None)
    return 0


def _sync(torch, _):
    torch.cuda.synchronize()


def _dynamo_limits(torch):
    torch._dynamo.config.cache_size_limit = 1024
    if hasattr(torch._dynamo.config, 'recompile_limit'):
        torch._dynamo.config.recompile_limit = 1024


def for_each_size(a, n, t0, fn_size, emit):
    """Calls fn_size(spec, sizes, torch_fn, inputs, record) at each of n's SIZES; emit(record) for each."""
    import torch
    rec = {'chain': n}
    try:
        s = read_spec(n, a.gen, a.fusec)
        mod = load_chain(n)
        rec['family'] = s.family
        err = contract_errors(s, mod)
        if err:
            raise RuntimeError('; '.join(err))
    except Exception as e:
        rec['error'] = '%s: %s' % (type(e).__name__, e)
        if emit:
            emit(rec)
        return
    torch._dynamo.reset()
    for d in mod.SIZES:
        r = dict(rec, sizes=d, bytes=traffic_bytes(s, d))
        if a.budget and time.time() - t0 > a.budget:
            r['error'] = 'skipped: over the time budget (%gs)' % a.budget
            if emit:
                emit(r)
            continue
        try:
            inp = mod.make_inputs(d, 'cuda') if hasattr(mod, 'make_inputs') else default_inputs(s, d, 'cuda')
            fn_size(s, d, mod.torch_fn, inp, r)
        except Exception as e:
            r['error'] = '%s: %s' % (type(e).__name__, str(e).split('\n')[0][:300])
        if emit:
            emit(r)
        inp = None
        torch.cuda.empty_cache()


def graph(fn, inp, r):
    """The eager chain captured once in a CUDA graph and replayed (issue 28:
    where launches dominate, what an expert does): graph_ms, or graph_error
    when the chain cannot be captured (a host sync, a data-dependent shape)."""
    import torch
    from triton.testing import do_bench
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):  # warm-up off the capture: allocator pools, lazy inits
            for _ in range(3):
                fn(inp)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn(inp)
        r['graph_ms'] = do_bench(g.replay, warmup=25, rep=100, return_mode='median')
    except Exception as e:  # noqa: BLE001 (recorded, the run goes on)
        r['graph_error'] = '%s: %s' % (type(e).__name__, str(e).split('\n')[0][:200])


def timing(a, names):
    import torch
    from triton.testing import do_bench
    _dynamo_limits(torch)
    out = open(a.out, 'w') if a.out else sys.stdout

    def emit(rec):
        out.write(json.dumps(rec) + '\n')
        out.flush()
    t0 = time.time()
    x = torch.empty(1 << 30, dtype=torch.uint8, device='cuda')
    ms = do_bench(lambda: x.clone(), warmup=25, rep=100, return_mode='median')
    del x
    torch.cuda.empty_cache()
    emit({'copy_bw': 2.0 * (1 << 30) / (ms * 1e-3), 'copy_ms': ms, 'device': torch.cuda.get_device_name(),
          'torch': torch.__version__})

    def bench(s, d, fn, inp, r):
        if not a.no_eager:
            r['eager_ms'] = do_bench(lambda: fn(inp), warmup=25, rep=100, return_mode='median')
        if not a.no_eager and not a.no_graph:
            graph(fn, inp, r)
        if not a.no_compile:
            cf = torch.compile(fn, dynamic=False)
            t = time.time()
            cf(inp)
            torch.cuda.synchronize()
            r['compile_s'] = round(time.time() - t, 2)
            r['compile_ms'] = do_bench(lambda: cf(inp), warmup=25, rep=100, return_mode='median')
    for n in names:
        for_each_size(a, n, t0, bench, emit)
    return 0


if __name__ == '__main__':
    sys.exit(main())
