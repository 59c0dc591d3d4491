#!/usr/bin/env python3
"""% of the copy floor against size, one panel per chain, from a sweep.json of
bench/proto/sweep.py: the fastest validated prototype shape and torch.compile
(and eager) at each size. Writes a PNG with no dependencies beyond the
standard library (no matplotlib on the machines we have), so the plot can be
made wherever the JSON is.
usage: python3 bench/plot.py sweep.json out.png"""
import json
import math
import struct
import sys
import zlib

W, H = 1260, 820
COLS = {'ours': (31, 119, 180), 'compile': (214, 39, 40), 'eager': (150, 150, 150), 'axis': (0, 0, 0), 'grid': (225, 225, 225)}

# 5x7 bitmap font: digits and the signs the axes need
FONT = {
    '0': '01110100011001110101110011000101110', '1': '00100011000010000100001000010001110',
    '2': '01110100010000100010001000100011111', '3': '11111000100010000010000011000101110',
    '4': '00010001100101010010111110001000010', '5': '11111100001111000001000011000101110',
    '6': '00110010001000011110100011000101110', '7': '11111000010001000100010000100001000',
    '8': '01110100011000101110100011000101110', '9': '01110100011000101111000010001001100',
    '%': '11000110010001000100010000100110011', '^': '00100010101000100000000000000000000',
    'x': '00000000001000101010001000101010001', ' ': '0' * 35, '-': '00000000000000011111000000000000000',
    '.': '00000000000000000000000000110001100', '/': '00001000010001000100010001000010000',
    '(': '00010001000100001000010000010000010', ')': '01000001000001000010000100010001000',
    ':': '00000011000110000000011000110000000', '=': '00000000001111100000111110000000000',
    ',': '00000000000000000000001100010001000',
}


def glyph(ch):
    return FONT.get(ch, '0' * 35)  # digits and signs only


class Img:
    def __init__(self):
        self.p = bytearray(b'\xff' * (W * H * 3))

    def px(self, x, y, c):
        if 0 <= x < W and 0 <= y < H:
            i = (y * W + x) * 3
            self.p[i:i + 3] = bytes(c)

    def line(self, x0, y0, x1, y1, c, t=1):
        n = int(max(abs(x1 - x0), abs(y1 - y0), 1))
        for k in range(n + 1):
            x = round(x0 + (x1 - x0) * k / n)
            y = round(y0 + (y1 - y0) * k / n)
            for dx in range(t):
                for dy in range(t):
                    self.px(x + dx, y + dy, c)

    def text(self, x, y, s, c=(0, 0, 0)):
        for ch in s:
            g = glyph(ch)
            for r in range(7):
                for q in range(5):
                    if g[r * 5 + q] == '1':
                        self.px(x + q, y + r, c)
            x += 6

    def png(self, path):
        raw = b''.join(b'\x00' + bytes(self.p[y * W * 3:(y + 1) * W * 3]) for y in range(H))

        def chunk(t, d):
            return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
        data = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', W, H, 8, 2, 0, 0, 0)) + \
            chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')
        open(path, 'wb').write(data)


def main():
    d = json.load(open(sys.argv[1]))
    chains = []
    for r in d['rows']:
        if r['kind'] not in chains:
            chains.append(r['kind'])
    img = Img()
    # the font has digits and signs only: panels are, in order, the chains
    # of the JSON (left to right, top to bottom); blue = the fastest
    # prototype, red = torch.compile, grey = eager; y = % of the copy floor,
    # x = log2 of the row width (softmax) or of the element count
    pw, ph = 560, 360
    for n, ch in enumerate(chains):
        ox, oy = 60 + (n % 2) * (pw + 40), 40 + (n // 2) * (ph + 40)
        rows = [r for r in d['rows'] if r['kind'] == ch]

        def xsize(r):
            s = r['size']
            if s.startswith('2^'):
                return float(s[2:])
            a, b = s.split('x')
            # the row width where every size has the same element count
            return math.log2(int(b)) if ch == 'softmax' or same_n else math.log2(int(a) * int(b))
        same_n = len({eval(r['size'].replace('x', '*')) for r in rows if 'x' in r['size']}) == 1
        xs = [xsize(r) for r in rows]
        x0, x1 = min(xs), max(xs)
        if x1 == x0:
            x1 = x0 + 1
        X = lambda v: ox + 40 + (v - x0) / (x1 - x0) * (pw - 60)
        Y = lambda v: oy + ph - 20 - min(max(v, 0), 110) / 110 * (ph - 40)
        for g in (0, 25, 50, 75, 100):
            img.line(X(x0), Y(g), X(x1), Y(g), COLS['grid'])
            img.text(ox + 5, int(Y(g)) - 3, '%3d%%' % g)
        img.line(X(x0), Y(0), X(x1), Y(0), COLS['axis'])
        img.line(X(x0), Y(0), X(x0), Y(110), COLS['axis'])
        for v in sorted(set(xs)):
            img.text(int(X(v)) - 8, int(Y(0)) + 6, '%d' % v)
        img.text(ox + 40, oy + 2, '(%d)' % (n + 1))
        for key in ('eager', 'compile', 'ours'):
            pts = []
            for r, xv in sorted(zip(rows, xs), key=lambda t: t[1]):
                if key == 'ours':
                    ok = [c['ms'] for c in r['cands'] if c.get('ms')]
                    ms = min(ok) if ok else None
                else:
                    ms = r.get(key + '_ms')
                if ms:
                    pts.append((X(xv), Y(100 * r['floor_ms'] / ms)))
            for a, b in zip(pts, pts[1:]):
                img.line(a[0], a[1], b[0], b[1], COLS[key], 2)
            for p in pts:
                for dx in range(-2, 3):
                    for dy in range(-2, 3):
                        img.px(int(p[0]) + dx, int(p[1]) + dy, COLS[key])
    img.png(sys.argv[2])


main()
