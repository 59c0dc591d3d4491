#!/bin/sh
# On a GPU machine: the generic call (the manifest's launch recipe: what
# fz_call and the Python package run, no generated code) against NAME.h's
# typed launchers, for every shipped spec at tests/gpu/run.sh's sizes.
#   1. fuserun validate SPEC --recipe: both variants from the recipe against
#      the float64 reference (as `fuserun validate` checks the header's);
#   2. fuserun bench SPEC, with and without --recipe, at the largest size:
#      the same kernels at the same grids, so the times agree (a ratio
#      outside 0.9..1.1 is reported, not failed: timing noise).
# The CPU side (make check, runtime/tests/test_call.c) compares the two op
# lists, args structs and driver calls exactly for every spec.
# usage: sh runtime/tests/gpu_call.sh [SPEC...]   (after make; OUT=dir for logs)
FUSERUN=${FUSERUN:-bin/fuserun}
OUT=${OUT:-build/gpu_call}
mkdir -p "$OUT"
eval "$(sed -n '/^sizes() {/,/^}/p' tests/gpu/run.sh)"
specs=${*:-$(ls specs | sed 's/\.fuse$//')}
pass=0 fail=0
for s in $specs; do
	sz=$(sizes "$s")
	[ -n "$sz" ] || { echo "FAIL $s: no sizes in tests/gpu/run.sh"; fail=$((fail + 1)); continue; }
	for z in $sz; do
		if $FUSERUN validate "$s" --size "$z" --recipe --seed 7 >"$OUT/$s.$z.log" 2>&1; then pass=$((pass + 1))
		else echo "FAIL $s $z: validate --recipe (log $OUT/$s.$z.log)"; tail -5 "$OUT/$s.$z.log" | sed 's/^/    /'; fail=$((fail + 1)); fi
	done
	big=$(echo "$sz" | tr ' ' '\n' | tail -1)
	h=$($FUSERUN bench "$s" --size "$big" --reps 50 --json 2>"$OUT/$s.bench.err")
	r=$($FUSERUN bench "$s" --size "$big" --reps 50 --json --recipe 2>>"$OUT/$s.bench.err")
	if [ -z "$h" ] || [ -z "$r" ]; then echo "FAIL $s: bench (log $OUT/$s.bench.err)"; fail=$((fail + 1)); continue; fi
	pass=$((pass + 1))
	python3 - "$s" "$big" "$h" "$r" <<'PY'
import json, sys
s, big, h, r = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
for v in ("fused", "unfused"):
    a, b = h[v]["median_ms"], r[v]["median_ms"]
    note = "" if a and 0.9 <= b / a <= 1.1 else "   <- differs by more than 10%: rerun, or look"
    print(f"{s:24s} {big:32s} {v:8s} header {a:9.4f} ms  recipe {b:9.4f} ms{note}")
PY
done
echo "gpu_call: $pass passed, $fail failed"
[ $fail = 0 ]
