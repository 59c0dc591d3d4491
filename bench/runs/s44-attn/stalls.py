"""Warp-stall samples of an ncu report's SASS, summed (session 44, issue 22).
   ncu --import R.ncu-rep --page source --print-source sass --csv > src.csv
   python3 stalls.py src.csv [N]
Prints the samples by stall reason, then the N (40) instructions with the
most samples, each with its index, samples, executions and top reasons:
a wait loop's branch after SYNCS.PHASECHK...TRYWAIT is an mbarrier wait,
and its executions say whose (one a tile and warp, one a step, ...)."""
import collections
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
hdr, data = rows[1], rows[2:]
iS = hdr.index("Warp Stall Sampling (All Samples)")
iE = hdr.index("Instructions Executed")
stall = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
num = lambda v: int(v) if v.isdigit() else 0
tot = sum(num(r[iS]) for r in data)
print("samples", tot, "instructions", len(data))
c = collections.Counter()
for r in data:
    for i in stall:
        c[hdr[i]] += num(r[i])
for k, v in c.most_common(12):
    print("%-28s %6d %.1f%%" % (k, v, 100 * v / max(tot, 1)))
for idx in sorted(range(len(data)), key=lambda j: -num(data[j][iS]))[:int(sys.argv[2]) if len(sys.argv) > 2 else 40]:
    r = data[idx]
    why = sorted(((num(r[i]), hdr[i][6:]) for i in stall if num(r[i])), reverse=True)[:3]
    print(idx, r[iS], r[iE], r[1].strip()[:70], why)
