#!/usr/bin/env python3
"""Writes the tuning table (fusec/plan/tune.h has the format) from a sweep.json of
bench/proto/sweep.py: per kernel kind and size bucket, the fastest candidate
that validated. `make tune` runs this on a GPU machine after the sweep.
usage: python3 bench/proto/mktable.py sweep.json [ARCH] > tune/table.txt"""
import json
import math
import sys

d = json.load(open(sys.argv[1]))
arch = sys.argv[2] if len(sys.argv) > 2 else 'sm_90'
meta = d['meta']
entries = []


def best(r):
    ok = [c for c in r['cands'] if c.get('ms')]
    return min(ok, key=lambda c: c['ms']) if ok else None


for r in d['rows']:
    b = best(r)
    if not b:
        continue
    kind, name = r['kind'], b['name']
    if kind == 'softmax':
        C = int(r['size'].split('x')[1])
        bucket = max(0, math.ceil(math.log2(C / 4)))  # the row's width in 16-byte vectors
        shape, params = name.split('/')
        if shape == 'reg':
            tpr, nv, vec, fast = map(int, params.split(','))
            if vec != 4:
                continue
            entries.append((arch, 'row', bucket, 'lanes=%d vecs=%d block=%d' % (tpr, nv, max(256, tpr))))
        else:
            entries.append((arch, 'row', 30, 'lanes=%s vecs=0 online=1 block=%s' % (params, params)))
    elif kind == 'kl' and r['size'] == '2^28':
        blk, u, per = name.split('/')[1].split(',')[:3]
        entries.append((arch, 'mapreduce', 63, 'block=%s per_sm=%s vecs=%s' % (blk, per, u)))
    elif kind == 'sigmoid' and r['size'] == '2^28':
        u, g = name.split('/')[1].split(',')
        entries.append((arch, 'map', 63, 'block=256 vecs=%s per_sm=%s' % (u[1:], g.split('=')[1].split('/')[0] if '=' in g else 0)))
    elif kind == 'bn' and r['size'] == '65536x1024':
        entries.append((arch, 'colmap', 63, 'block=256 rows=%s vecs=1' % name.split('rows')[1]))

seen = {}
for e in entries:  # one entry per bucket: the first (narrowest row) wins a tie
    seen.setdefault(e[:3], e)
print('# fusec tuning table: ARCH KIND BUCKET PARAM=INT..., sorted; format in fusec/plan/tune.h.')
print('# Written by bench/proto/mktable.py from one bench/proto/sweep.py run (make tune); do not edit.')
print('# row: BUCKET b serves rows up to 2^b 16-byte vectors wide; lanes = threads a row,')
print('#   vecs = 16-byte vectors a thread keeps in registers (0: online, rows re-read);')
print('# map, mapreduce, colmap: BUCKET 63 serves every size; per_sm 0 = a grid that covers the tensor.')
print('@ device=%s cuda=%s torch=%s triton=%s date=%s copy_gbs=%.0f' % (meta['device'].replace(' ', '_'), meta.get('cuda', '13.0'),
      meta['torch'], meta.get('triton', '3.6.0'), meta['date'], meta['copy_gbs']))
for e in sorted(seen.values(), key=lambda e: (e[0], e[1], e[2])):
    print('%s %s %02d %s' % e)
