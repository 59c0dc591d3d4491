#!/usr/bin/env python3
"""bench/rows.sh output (validator lines and peer lines) to the JSON that
bench/plot.py draws: one row per chain and size, ours (fused), torch eager and
torch.compile, with the copy floor of the validator line. Later files win for
a size measured twice.
usage: python3 bench/rows_json.py OUT.json rows.txt..."""
import json
import re
import sys

rows = {}
for path in sys.argv[2:]:
    for line in open(path):
        m = re.match(r'^(\w+)\s+R=(\d+),C=(\d+)\s+PASS .* fused=([\d.]+)ms .* floor=([\d.]+)ms', line)
        if m:
            k = (m.group(1), '%sx%s' % (m.group(2), m.group(3)))
            r = rows.setdefault(k, {'kind': k[0], 'size': k[1]})
            r['floor_ms'] = float(m.group(5))
            r['cands'] = [{'name': 'fused', 'ms': float(m.group(4))}]
            continue
        m = re.match(r'^peer (\w+) R=(\d+),C=(\d+) eager=([\d.]+)ms compile=([\d.]+)ms', line)
        if m:
            k = (m.group(1), '%sx%s' % (m.group(2), m.group(3)))
            r = rows.setdefault(k, {'kind': k[0], 'size': k[1]})
            r['eager_ms'], r['compile_ms'] = float(m.group(4)), float(m.group(5))
out = [r for r in rows.values() if 'floor_ms' in r and 'compile_ms' in r]  # the sweep's sizes
out.sort(key=lambda r: (r['kind'], int(r['size'].split('x')[1])))
json.dump({'meta': {'from': sys.argv[2:]}, 'rows': out}, open(sys.argv[1], 'w'), indent=1)
