#!/bin/sh
# Session 41, call 4 (H100), branch i21wide as planned: 512 threads a
# streamed row only where the row is read once (KernelParams.row_stream,
# plan_stream). The 19 corpus chains that have such a kernel in either
# variant, validated and timed against main's artifacts (BASE) and
# torch.compile; the shipped softmax and groupnorm (regenerated) at their
# run.sh sizes and wide, prime, misaligned ones; memcheck and racecheck.
# Carry: build/wt41 (new, base: main's; runtime: the branch's sources;
# gen: the branch's generated softmax and groupnorm; names.txt).
set -u
OUT=${OUT:-/tmp/s41c4}
mkdir -p "$OUT" build/s41 bench/corpus/gen lib
CU=${CUDA_HOME:-/usr/local/cuda}
S=$OUT/summary.txt
exec >"$S" 2>&1
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
cp build/wt41/runtime/fuserun.h build/wt41/runtime/recipe.c runtime/ && make -s lib/libfuserun.a && cp build/wt41/new/* bench/corpus/gen/
G=build/wt41/gen
v() { n=$1; shift; timeout 120 build/s41/v_$n "$@" --dir $G --seed 5 --reps 2 > build/s41/o.txt 2>&1; echo "$n $*: rc $? $(grep -o 'PASS\|FAIL' build/s41/o.txt | head -1) $(grep -o 'fused_err/tol=[0-9.e-]*' build/s41/o.txt | head -1)"; }
for n in softmax groupnorm; do sh tests/gpu/build_driver.sh $n $G build/s41/v_$n -L$CU/lib64/stubs -lcuda || echo "no driver $n"; done
for sz in "R=1 C=1" "R=37 C=1001" "R=5 C=40000" "R=8192 C=8192" "R=7 C=30011" "R=3 C=40009 --misalign" "R=5 C=24577" "R=2 C=100003 --misalign" "R=129 C=24580"; do v softmax $sz; done
for sz in "N=1 G=1 CG=1 HW=1" "N=3 G=5 CG=7 HW=33" "N=2 G=4 CG=16 HW=4096" "N=2 G=3 CG=3 HW=50001" "N=32 G=32 CG=16 HW=1024" "N=2 G=3 CG=5 HW=50001 --misalign"; do v groupnorm $sz; done
for t in memcheck racecheck; do
	timeout 120 compute-sanitizer --tool $t build/s41/v_softmax R=3 C=40009 --misalign --dir $G --once 2>&1 | tail -1
	timeout 120 compute-sanitizer --tool $t build/s41/v_groupnorm N=2 G=3 CG=3 HW=50001 --dir $G --once 2>&1 | tail -1
done
echo "--- corpus ($(( $(date +%s) - t0 )) s)"
OUT=build/s41/corpus REPS=50 HEADLINE=1 DEADLINE=400 VJOBS=12 PJOBS=6 NO_EAGER=1 BASE=build/wt41/base \
	sh bench/corpus/run.sh $(cat build/wt41/names.txt) > build/s41/corpus.log 2>&1
echo "corpus rc $?"
tail -12 build/s41/corpus/log.txt 2>/dev/null
grep -E "^\| |geomean|above" build/s41/corpus/table.md
cp build/s41/corpus/base.txt build/s41/corpus/ours.txt build/s41/corpus/table.md $OUT/ 2>/dev/null
echo "done ($(( $(date +%s) - t0 )) s)"
