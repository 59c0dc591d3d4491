#!/bin/sh
# Session 41, call 5 (H100), branch i21wide: the argmax pair (a max and the
# first column holding it in one walk, plan_argmax), so that row_argmax
# reads its row once and streams it by 512 threads too. row_argmax and top1
# validated at their CHECK sizes, misaligned and SIZES[0] (run.sh), at wide,
# prime and misaligned widths here, memcheck and racecheck; timed against
# main's artifacts (BASE) and torch.compile.
# Carry: build/wt41 (new: the branch's artifacts, base: main's, runtime: the
# branch's sources, names.txt).
set -u
OUT=${OUT:-/tmp/s41c5}
mkdir -p "$OUT" build/s41 bench/corpus/gen lib
CU=${CUDA_HOME:-/usr/local/cuda}
S=$OUT/summary.txt
exec >"$S" 2>&1
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
cp build/wt41/runtime/fuserun.h build/wt41/runtime/recipe.c runtime/ && make -s lib/libfuserun.a && cp build/wt41/new/* bench/corpus/gen/
G=build/wt41/gen
v() { n=$1; shift; timeout 120 build/s41/v_$n "$@" --dir $G --seed 5 --reps 2 > build/s41/o.txt 2>&1; echo "$n $*: rc $? $(grep -o 'PASS\|FAIL' build/s41/o.txt | head -1) $(grep -o 'fused_err/tol=[0-9.e-]*' build/s41/o.txt | head -1)"; }
G=build/wt41/new
for n in row_argmax top1; do sh tests/gpu/build_driver.sh $n $G build/s41/v_$n -L$CU/lib64/stubs -lcuda || echo "no driver $n"; done
for sz in "R=1 C=1" "R=3 C=24577" "R=5 C=40009 --misalign" "R=2 C=100003" "R=7 C=65536 --misalign" "R=64 C=32000"; do v row_argmax $sz; v top1 $sz; done
for t in memcheck racecheck; do
	timeout 120 compute-sanitizer --tool $t build/s41/v_row_argmax R=3 C=40009 --misalign --dir $G --once 2>&1 | tail -1
done
echo "--- corpus ($(( $(date +%s) - t0 )) s)"
OUT=build/s41/corpus REPS=50 HEADLINE=1 DEADLINE=200 VJOBS=12 PJOBS=6 NO_EAGER=1 BASE=build/wt41/base \
	sh bench/corpus/run.sh $(cat build/wt41/names.txt) > build/s41/corpus.log 2>&1
echo "corpus rc $?"
tail -12 build/s41/corpus/log.txt 2>/dev/null
grep -E "^\| |geomean|above" build/s41/corpus/table.md
cp build/s41/corpus/base.txt build/s41/corpus/ours.txt build/s41/corpus/table.md $OUT/ 2>/dev/null
echo "done ($(( $(date +%s) - t0 )) s)"
