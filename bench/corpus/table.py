#!/usr/bin/env python3
"""The corpus table: our timings (run.sh's ours.txt, validate.c's lines
"... fused=Xms unfused=Yms ... launches=F/U ..."), the validations
(validate.tsv) and the peers (peers.jsonl, harness.py) merged into one
markdown table, a row per chain and size, then the geometric mean of
ours/compile and the count above 1.10 (issue 21's bars: geomean <= 0.95,
none above 1.10), and of ours/best peer: eager, the eager chain replayed as
a CUDA graph, or compiled, whichever was fastest (issue 28). floor = bytes of every input and output at that size /
the copy bandwidth measured in the same run (bytes read + written per second
of a clone of 1 GiB). Also a plot of ours/compile per chain (OUT/ratio.png),
when matplotlib is there.
usage: table.py OUT [--plot FILE]      (OUT: run.sh's folder, default build/corpus)"""
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402  (no torch needed for what is used here)

LINE = re.compile(r'^(?:\([^)]*\) )*(\S+)\s+(\S+)\s+(PASS|FAIL)\s.*?fused=([0-9.]+)ms unfused=([0-9.]+)ms'
                  r'.*?launches=(\d+)/(\d+).*?copy=([0-9.]+)TB/s')


def key(sizes):
    return tuple(sorted((k, int(v)) for k, v in sizes.items()))


def parse_sizes(text):
    return dict((kv.split('=')[0], int(kv.split('=')[1])) for kv in re.split(r'[ ,]+', text.strip()) if '=' in kv)


def main():
    args = [a for a in sys.argv[1:]]
    plot = None
    if '--plot' in args:
        i = args.index('--plot')
        plot = args[i + 1]
        del args[i:i + 2]
    out = args[0] if args else 'build/corpus'
    plot = plot or os.path.join(out, 'ratio.png')

    def lines(f):
        p = os.path.join(out, f)
        return open(p).read().split('\n') if os.path.exists(p) else []

    # the runs planned: chain -> SIZES, in order
    order, sizes_of = [], {}
    for ln in lines('plan.txt'):
        w = ln.split(' ', 2)
        if len(w) == 3 and w[1] == 'time':
            if w[0] not in sizes_of:
                order.append(w[0])
                sizes_of[w[0]] = []
            sizes_of[w[0]].append(parse_sizes(w[2]))
    ours, ours_err, copies = {}, {}, []
    for ln in lines('ours.txt'):
        m = LINE.match(ln)
        if m:
            ours[(m.group(1), key(parse_sizes(m.group(2))))] = (float(m.group(4)), float(m.group(5)),
                                                                 '%s/%s' % (m.group(6), m.group(7)))
            copies.append(float(m.group(8)) * 1e12)
        elif ln.startswith('ERROR '):
            m = re.match(r'ERROR (\S+) (.*?): (.*)$', ln)
            if m:
                ours_err[(m.group(1), key(parse_sizes(m.group(2))))] = m.group(3)
    val = {}
    for ln in lines('validate.tsv'):
        w = ln.split('\t')
        if len(w) == 4:
            val.setdefault(w[0], []).append((w[1], w[2], w[3]))
    peers, bw, device = {}, None, ''
    for ln in lines('peers.jsonl'):
        if not ln.strip():
            continue
        r = json.loads(ln)
        if 'copy_bw' in r:
            bw, device = r['copy_bw'], '%s, torch %s' % (r.get('device', '?'), r.get('torch', '?'))
            continue
        if 'sizes' in r:
            peers[(r['chain'], key(r['sizes']))] = r
        else:
            peers[(r['chain'], None)] = r
    bw_src = 'torch clone of 1 GiB'
    if bw is None and copies:
        bw, bw_src = sorted(copies)[len(copies) // 2], "validate.c's cuMemcpyDtoD of 1 GiB"

    def fmt(x, f='%.4f'):
        return f % x if x is not None else '-'
    rows, ratios, notes, best_ratios = [], [], [], []
    print('# bench/corpus: ours against torch eager and torch.compile\n')
    print('Device: %s. Copy bandwidth %s (%s, bytes read + written per s). ours: fused and unfused, '
          'tests/gpu/validate.c --flush --time-only; eager, compile: triton do_bench median.\n'
          % (device or '?', '%.2f TB/s' % (bw / 1e12) if bw else '?', bw_src))
    print('| chain | family | size | ours fused ms | unfused ms | launches f/u | eager ms | graph ms | compile ms | '
          'ours/compile | best peer | ours/best | % of floor | validation |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
    for n in order:
        try:
            spec = harness.read_spec(n, os.path.join(HERE, 'gen'), os.path.join(HERE, '..', '..', 'bin', 'fusec'))
            fam = spec.family
        except Exception:
            spec, fam = None, '?'
        v = val.get(n, [])
        bad = [x for x in v if x[2] != 'PASS']
        vs = 'PASS (%d)' % len(v) if v and not bad else \
            'not run' if not v else '%s (%d of %d: %s)' % (bad[0][2], len(bad), len(v),
                                                       ', '.join('%s %s' % (b[0], b[1]) for b in bad[:3]))
        for d in sizes_of[n]:
            k = (n, key(d))
            o, p = ours.get(k), peers.get(k) or peers.get((n, None)) or {}
            if k in ours_err:
                notes.append('%s %s: ours: %s' % (n, harness.size_text(d), ours_err[k]))
            if p.get('error'):
                notes.append('%s %s: peers: %s' % (n, harness.size_text(d), p['error']))
            fused = o[0] if o else None
            comp = p.get('compile_ms')
            ratio = fused / comp if fused and comp else None
            if ratio:
                ratios.append((n, harness.size_text(d), ratio))
            if p.get('graph_error'):
                notes.append('%s %s: graph: %s' % (n, harness.size_text(d), p['graph_error']))
            # issue 28: PyTorch at its best, eager, its CUDA graph or compiled, whichever is fastest
            cands = [(p[k], w) for k, w in (('eager_ms', 'eager'), ('graph_ms', 'graph'), ('compile_ms', 'compile')) if p.get(k)]
            best = min(cands) if cands else None
            rbest = fused / best[0] if fused and best else None
            if rbest:
                best_ratios.append(rbest)
            nbytes = p.get('bytes') or (harness.traffic_bytes(spec, d) if spec else None)
            floor = 100.0 * (nbytes / bw * 1e3) / fused if nbytes and bw and fused else None
            print('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                n, fam, harness.size_text(d), fmt(fused), fmt(o[1] if o else None), o[2] if o else '-',
                fmt(p.get('eager_ms')), fmt(p.get('graph_ms')), fmt(comp), fmt(ratio, '%.2f'), best[1] if best else '-',
                fmt(rbest, '%.2f'), fmt(floor, '%.0f%%'), vs))
            rows.append(n)
    print()
    if ratios:
        gm = math.exp(sum(math.log(r) for _, _, r in ratios) / len(ratios))
        above = [(n, s, r) for n, s, r in ratios if r > 1.10]
        print('geomean ours/compile: %.3f over %d chain-sizes (bar: <= 0.95, %s)' % (gm, len(ratios),
                                                                                 'met' if gm <= 0.95 else 'not met'))
        print('above 1.10: %d (bar: none, %s)%s' % (len(above), 'met' if not above else 'not met',
                                                    ''.join('\n  %s %s: %.2f' % a for a in above)))
        if best_ratios:
            print('geomean ours/best peer (eager, its CUDA graph or compile, whichever is fastest): %.3f over %d chain-sizes'
                  % (math.exp(sum(math.log(r) for r in best_ratios) / len(best_ratios)), len(best_ratios)))
        hl = [(n, s, r) for n, s, r in ratios if sizes_of[n] and s == harness.size_text(sizes_of[n][0])]
        if hl:
            print('geomean at the headline sizes (SIZES[0]): %.3f over %d chains'
                  % (math.exp(sum(math.log(r) for _, _, r in hl) / len(hl)), len(hl)))
    else:
        print('geomean ours/compile: no chain-size has both timings')
    if notes:
        print('\nnot measured:\n' + '\n'.join('* ' + x for x in notes))
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except Exception:
        return 0
    if ratios:
        fig, ax = plt.subplots(figsize=(max(8, 0.3 * len(ratios)), 5))
        ax.bar(range(len(ratios)), [r for _, _, r in ratios],
               color=['tab:red' if r > 1.10 else 'tab:blue' for _, _, r in ratios])
        ax.axhline(1.0, color='k', lw=0.8)
        ax.axhline(1.10, color='tab:red', lw=0.8, ls='--')
        ax.set_xticks(range(len(ratios)))
        ax.set_xticklabels(['%s %s' % (n, s) for n, s, _ in ratios], rotation=90, fontsize=6)
        ax.set_ylabel('ours fused / torch.compile (time)')
        ax.set_title('bench/corpus: ours / torch.compile, lower is better')
        fig.tight_layout()
        fig.savefig(plot, dpi=120)
    return 0


if __name__ == '__main__':
    sys.exit(main())
