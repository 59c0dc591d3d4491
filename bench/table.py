#!/usr/bin/env python3
"""Joins our timings (tests/gpu/validate.c lines) with PyTorch's (bench/peers.py
JSON) into one Markdown table: ms, and our fused time as a ratio of each peer."""
import json
import re
import sys

ours_path, peers_path = sys.argv[1], sys.argv[2]
peers = json.load(open(peers_path))
rows = []
for line in open(ours_path):
    m = re.search(r'^(?:\(timing only, not checked\) )?(\S+)\s+(\S+)\s+(PASS|FAIL).*?fused=([\d.]+)ms unfused=([\d.]+)ms.*?launches=(\d+)/(\d+) floor=([\d.]+)ms', line)
    if m:
        rows.append(dict(chain=m.group(1), size=m.group(2), status=m.group(3) + (" (time only)" if line.startswith("(timing") else ""),
                         fused=float(m.group(4)), unfused=float(m.group(5)), lf=m.group(6), lu=m.group(7),
                         floor=float(m.group(8))))

def size_key(chain, size):
    d = dict(kv.split('=') for kv in size.split(','))
    if chain in ('kl_divergence', 'prediction_error', 'relu', 'sigmoid', 'tanh', 'vector_add'):
        return '2^%d' % (int(d['N']).bit_length() - 1)
    if chain in ('belief_update', 'gemv_axpby_sum'):
        return '%sx%s' % (d['M'], d['N'])
    if chain == 'softmax':
        return '%sx%s' % (d['R'], d['C'])
    if chain == 'batchnorm_inference':
        return '%sx%s' % (d['B'], d['C'])
    if chain.startswith('matmul') or chain.startswith('linear'):
        bf16 = chain.endswith('_bf16') or chain in ('matmul_residual', 'linear_bias_gelu')
        return '%s^3 %s' % (d['M'], 'bf16' if bf16 else 'f16')
    if chain == 'bmm_bias_relu':
        return '%sx%s^3 bf16' % (d['Bt'], d['M'])
    if chain == 'attn_scores':
        return '%sx%sx%sx%s f16' % (d['Bt'], d['M'], d['N'], d['D'])
    if chain == 'transfer_entropy':
        return 'N=2^%d' % (int(d['N']).bit_length() - 1)
    if chain == 'spike_burst':
        n = int(d['N'])
        return 'N=%s,F=%s,syn=100' % ('2^20' if n == 1 << 20 else str(n), d['F'])
    return size

peer = {}
for r in peers.get('results', []):
    peer[(r['chain'], r['size'])] = r
ceil = peers.get('ceilings', {})
print('device: %s; copy ceiling %s GB/s; f16 matmul %s TFLOP/s (peers.py, same run)\n' % (
    peers.get('meta', {}).get('device', '?'), '%.0f' % ceil['copy_gbs'] if 'copy_gbs' in ceil else '?', ('%.0f' % ceil['f16_matmul_tflops']) if 'f16_matmul_tflops' in ceil else '?'))
print('| chain | size | check | fused ms | unfused ms | launches f/u | floor ms | torch eager ms | torch.compile ms | fused vs compile |')
print('|---|---|---|---|---|---|---|---|---|---|')
for r in rows:
    p = peer.get((r['chain'], size_key(r['chain'], r['size'])), {})
    e, c = p.get('eager_ms'), p.get('compile_ms')
    fmt = lambda x: '%.4f' % x if isinstance(x, (int, float)) else 'n/a'
    ratio = ('%.2fx faster' % (c / r['fused']) if c and c >= r['fused'] else '%.2fx slower' % (r['fused'] / c)) if c else 'n/a'
    print('| %s | %s | %s | %.4f | %.4f | %s/%s | %s | %s | %s | %s |' % (
        r['chain'], r['size'], r['status'], r['fused'], r['unfused'], r['lf'], r['lu'],
        fmt(r['floor']) if r['floor'] > 0 else '-', fmt(e), fmt(c), ratio))
