"""make tune: measured kernel parameters for tune/table.txt (issue 21).

fusec reads the table and never measures anything; this tool measures.
For each chain (a spec with a bench/corpus-style NAME.py beside it, giving
SIZES and CHECK), each tunable kernel of its fused variant (a row kernel
with a register cache, a point kernel neither sliced nor split: the kernels
`fusec --emit=schedule` prints with a sig=) gets a few candidate parameter
sets; each candidate is an artifact built with a one-line table, validated
against the float64 reference, and timed beside the built-in rules at the
chain's first SIZES entry. A candidate becomes an entry only when it
validated and beat the built-in time by more than MARGIN; the bucket is the
size it was measured at (tune.h).

  CPU (fusec, NVRTC):  python3 bench/tune.py build [--spec-dir D] [NAME...]
  GPU (cc, libcuda):   python3 bench/tune.py run
  either:              python3 bench/tune.py table [--merge tune/table.txt] > tune/table.txt

Files under build/tune (WORK): plan.json (the chains, kernels and
candidates), gen/NAME/CAND/ (the artifacts), times.jsonl (run's results).
A user tunes their own specs the same way: a NAME.py beside NAME.fuse with
SIZES and CHECK (bench/corpus/README.md), `build --spec-dir DIR NAME`, then
`run` on a GPU and `table --merge` (tune/README.md).
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys
import importlib.util

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
WORK = os.environ.get('WORK', os.path.join(ROOT, 'build', 'tune'))
MARGIN = 0.02
# candidates by kernel mode: each a parameter set (tune.c's ranges)
CANDIDATES = {
    # rcache: the row's share a thread caches; regs: a register cap in place
    # of the launch bound (more rows in flight an SM: the memory-bound rows
    # ran at 81-88% of the copy floor where torch.compile reached 95-99%,
    # H100 2026-11-27, with 256-thread rows at up to 64 registers)
    'row': [{'rcache': r} for r in (2, 3, 4, 6, 8)] + [{'rcache': r, 'regs': g, 'paths': 1} for r in (2, 4) for g in (40, 48)],
    'point': [{'block': b} for b in (128, 256, 512, 1024)],
}
# TUNE_ROW / TUNE_POINT: a mode's candidates in place of the above, sets
# separated by ';', parameters by ',': TUNE_ROW='rcache=2;rcache=4,regs=48'
for _mode in CANDIDATES:
    _env = os.environ.get('TUNE_' + _mode.upper())
    if _env is not None:
        CANDIDATES[_mode] = [{k: int(v) for k, v in (kv.split('=') for kv in c.split(','))} for c in _env.split(';') if c]


# TUNE_SPILLS=1: candidates that spill are built and timed too. A register
# cap spills in the whole kernel's worst path (the scalar one, for rows of
# any alignment), which a launch may never take: the time says whether the
# spill is on the path that runs.
KEEP_SPILLS = os.environ.get('TUNE_SPILLS') == '1'


def chain_sizes(spec_dir, name):
    try:
        import torch  # noqa: F401  (not needed: the chain's torch_fn is not called here)
    except ImportError:
        sys.path.insert(0, os.path.join(ROOT, 'bench', 'corpus'))
        import harness
        harness.stub_torch()
    spec = importlib.util.spec_from_file_location('tune_' + name, os.path.join(spec_dir, name + '.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SIZES[0], mod.CHECK


def schedule_kernels(fusec, path):
    """(name, mode, sig, params dict) of each kernel of the fused schedule."""
    out = subprocess.run([fusec, '--emit=schedule', path], capture_output=True, text=True, check=True).stdout
    ks, cur, fused = [], None, False
    for line in out.split('\n'):
        m = re.match(r'schedule \S+ (fused|unfused) ', line)
        if m:
            fused = m.group(1) == 'fused'
        m = re.match(r'  kernel (\S+) (\S+) ', line)
        if m and fused:
            cur = (m.group(1), m.group(2))
        m = re.match(r'    params (.*)', line)
        if m and cur:
            par = dict(kv.split('=', 1) for kv in m.group(1).split() if '=' in kv)
            ks.append({'kernel': cur[0], 'mode': cur[1], 'sig': par.get('sig'), 'params': par})
            cur = None
    return ks


def bucket(sizes, manifest):
    """log2 of the largest tensor's elements at these sizes, rounded up (tune.h's BUCKET)."""
    big = 1
    for line in open(manifest):
        w = line.split()
        if len(w) > 4 and w[0] == 'param' and w[4] != '-':
            n = 1
            for d in w[4].split(','):
                n *= sizes[d] if d in sizes else int(d) if d.isdigit() else 1
            big = max(big, n)
    return max(1, math.ceil(math.log2(big)))


def build(a):
    fusec = os.path.join(ROOT, 'bin', 'fusec')
    names = a.names or sorted(f[:-5] for f in os.listdir(a.spec_dir) if f.endswith('.fuse'))
    plan = {'spec_dir': a.spec_dir, 'chains': []}
    for n in names:
        path = os.path.join(a.spec_dir, n + '.fuse')
        big, check = chain_sizes(a.spec_dir, n)
        gen = os.path.join(WORK, 'gen', n)
        os.makedirs(gen, exist_ok=True)
        archs = '--arch=sm_90,sm_90a'
        subprocess.run([fusec, '-o', os.path.join(gen, 'base'), archs, path], check=True)
        ch = {'name': n, 'sizes': big, 'check': check, 'cands': [],
              'bucket': bucket(big, os.path.join(gen, 'base', n + '.manifest'))}
        for k in schedule_kernels(fusec, path):
            if k['mode'] not in CANDIDATES:
                continue
            for c in CANDIDATES[k['mode']]:
                if all(k['params'].get(p) == str(v) for p, v in c.items()):
                    continue  # the built-in choice: that is 'base'
                tag = '%s_%s' % (k['kernel'], '_'.join('%s%d' % kv for kv in sorted(c.items())))
                d = os.path.join(gen, tag)
                os.makedirs(d, exist_ok=True)
                table = os.path.join(d, 'table.txt')
                with open(table, 'w') as f:
                    f.write('sm_90 %s 99 %s\n' % (k['sig'], ' '.join('%s=%d' % kv for kv in sorted(c.items()))))
                r = subprocess.run([fusec, '-o', d, archs, '--tune=' + table, path], capture_output=True, text=True)
                spill = 'spills' in r.stderr
                man = os.path.join(d, n + '.manifest')
                taken = r.returncode == 0 and any(l.startswith('kernel fused %s ' % k['kernel']) and ' tuned=' in l for l in open(man))
                if spill and KEEP_SPILLS and r.returncode == 0 and taken:  # timed all the same: where the spill lies decides
                    print('tune: %s %s: spills, kept (TUNE_SPILLS)' % (n, tag), file=sys.stderr)
                    spill = False
                if r.returncode or spill or not taken:  # fusec does not tune that kernel; a spill is not worth a GPU's time
                    why = r.stderr.strip()[:200] if r.returncode else 'spills' if spill else 'not a tunable kernel'
                    print('tune: %s %s: %s' % (n, tag, why), file=sys.stderr)
                    continue
                ch['cands'].append({'tag': tag, 'kernel': k['kernel'], 'sig': k['sig'], 'params': c})
        plan['chains'].append(ch)
        print('tune: %s: %d candidates' % (n, len(ch['cands'])))
    with open(os.path.join(WORK, 'plan.json'), 'w') as f:
        json.dump(plan, f, indent=1)
    return 0


def size_args(d):
    return ['%s=%d' % kv for kv in d.items()]


def cand_dir(name, tag):
    """Where build put a chain's candidate artifact (tag 'base': the built-in rules)."""
    return os.path.join(WORK, 'gen', name, tag)


def run(a):
    plan = json.load(open(os.path.join(WORK, 'plan.json')))
    subprocess.run(['make', '-s', 'lib/libfuserun.a'], cwd=ROOT, check=True)  # the drivers link it (build_driver.sh)
    cu = os.environ.get('CUDA_HOME', '/usr/local/cuda')
    cc = subprocess.run(['nvidia-smi', '--query-gpu=compute_cap', '--format=csv,noheader'], capture_output=True, text=True)
    arch = 'sm_' + cc.stdout.split('\n')[0].strip().replace('.', '') if cc.returncode == 0 else 'sm_90'
    out = open(os.path.join(WORK, 'times.jsonl'), 'w')
    jobs = [(ch, tag) for ch in plan['chains'] for tag in ['base'] + [c['tag'] for c in ch['cands']]]

    def build_one(job):  # the drivers first, all cores at once: the GPU half is serial
        ch, tag = job
        d = cand_dir(ch['name'], tag)
        return subprocess.run(['sh', 'tests/gpu/build_driver.sh', ch['name'], d, os.path.join(d, 'v'),
                               '-L' + cu + '/lib64/stubs', '-lcuda'], capture_output=True, text=True, cwd=ROOT)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        builds = list(pool.map(build_one, jobs))

    def validate_one(job):  # the float64 references run on the CPU: several at once too
        (ch, tag), b = job
        d = cand_dir(ch['name'], tag)
        if b.returncode:
            return None
        return all(subprocess.run([os.path.join(d, 'v')] + size_args(s) + ['--dir', d, '--seed', '11', '--reps', '2'],
                                  capture_output=True, text=True).returncode == 0 for s in ch['check'] + [ch['sizes']])
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2) // 2)) as pool:
        valid = list(pool.map(validate_one, zip(jobs, builds)))
    for (ch, tag), b, ok in zip(jobs, builds, valid):  # timed one at a time, alone on the GPU
        n = ch['name']
        d = cand_dir(n, tag)
        rec = {'chain': n, 'tag': tag, 'arch': arch, 'bucket': ch['bucket']}
        if b.returncode:
            rec['error'] = 'driver: ' + b.stderr[:200]
        else:
            rec['valid'] = ok
            t = subprocess.run([os.path.join(d, 'v')] + size_args(ch['sizes']) + ['--dir', d, '--flush', '--time-only', '--reps', str(a.reps)],
                               capture_output=True, text=True)
            m = re.search(r' fused=([0-9.]+)ms', t.stdout)
            if m:
                rec['ms'] = float(m.group(1))
        out.write(json.dumps(rec) + '\n')
        out.flush()
        print(json.dumps(rec))
    return 0


def table(a):
    plan = json.load(open(os.path.join(WORK, 'plan.json')))
    recs = [json.loads(l) for l in open(os.path.join(WORK, 'times.jsonl'))]
    entries, tools = {}, None
    if a.merge and os.path.exists(a.merge):
        for line in open(a.merge):
            w = line.split()
            if w and w[0] == '@':
                tools = line.rstrip('\n')
            elif w and not w[0].startswith('#'):
                entries[(w[0], w[1], w[2])] = ' '.join(w[3:])
    for ch in plan['chains']:
        mine = {r['tag']: r for r in recs if r['chain'] == ch['name']}
        base = mine.get('base', {}).get('ms')
        if not base:
            continue
        per_kernel = {}
        for c in ch['cands']:
            r = mine.get(c['tag'], {})
            if r.get('valid') and r.get('ms') and r['ms'] < base * (1 - MARGIN):
                best = per_kernel.get(c['sig'])
                if not best or r['ms'] < best[0]:
                    per_kernel[c['sig']] = (r['ms'], c, r['arch'])
        for sig, (ms, c, arch) in per_kernel.items():
            key = (arch, sig, '%02d' % ch['bucket'])
            entries[key] = ' '.join('%s=%d' % kv for kv in sorted(c['params'].items()))
            print('tune: %s %s: %.4f ms against %.4f built-in' % (ch['name'], c['tag'], ms, base), file=sys.stderr)
    head = open(os.path.join(ROOT, 'tune', 'table.txt')).read().split('\n')
    for line in head:
        if line.startswith('#'):
            print(line)
    if a.tools:
        tools = '@ ' + a.tools
    if tools:
        print(tools)
    for key in sorted(entries):  # C-locale order, as tune.c checks
        print('%s %s %s %s' % (key + (entries[key],)))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('what', choices=['build', 'run', 'table'])
    ap.add_argument('names', nargs='*')
    ap.add_argument('--spec-dir', default=os.path.join(ROOT, 'bench', 'corpus'))
    ap.add_argument('--reps', type=int, default=50)
    ap.add_argument('--merge', help='a table whose entries are kept unless measured again')
    ap.add_argument('--tools', help="the '@' line's text: device=... cuda=... date=...")
    a = ap.parse_intermixed_args()
    os.makedirs(WORK, exist_ok=True)
    return {'build': build, 'run': run, 'table': table}[a.what](a)


if __name__ == '__main__':
    sys.exit(main())
