#!/bin/sh
# Session 41, call 3 (H100), branch i21wide: rows wider than the registers
# (streamed) get 512 threads a row in 512-thread blocks (fz_row_lanes_s,
# recipe row_threads_s), so that two blocks share an SM. The six corpus
# chains that stream at their headline sizes, validated and timed against
# main's artifacts (BASE) and torch.compile; the shipped softmax at wide,
# prime and misaligned sizes; memcheck on the streamed path.
# Carry: build/wt41 (new41: the branch's artifacts, base41: main's, lib:
# the branch's libfuserun.a).
set -u
OUT=${OUT:-/tmp/s41c3}
mkdir -p "$OUT" build/s41 bench/corpus/gen lib
CU=${CUDA_HOME:-/usr/local/cuda}
S=$OUT/summary.txt
exec >"$S" 2>&1
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
cp build/wt41/runtime/fuserun.h build/wt41/runtime/recipe.c runtime/ && cp build/wt41/lib/libfuserun.a lib/ && cp build/wt41/new41/* bench/corpus/gen/  # the branch runtime: run.sh remakes lib/
sh tests/gpu/build_driver.sh softmax build/wt41/new41 build/s41/v_sm -L$CU/lib64/stubs -lcuda || echo "no softmax driver"
SKIP_SM=1; [ -n "${SKIP_SM:-}" ] || for sz in "R=1 C=1" "R=7 C=30011" "R=3 C=40009 --misalign" "R=5 C=24577" "R=2 C=100003 --misalign" "R=64 C=4096" "R=129 C=24580"; do
	timeout 60 build/s41/v_sm $sz --dir build/wt41/new41 --seed 5 --reps 2 > build/s41/sm.txt 2>&1; echo "softmax $sz: rc $? $(grep -o 'PASS\|FAIL' build/s41/sm.txt | head -1)"
done
timeout 120 compute-sanitizer --tool memcheck build/s41/v_sm R=3 C=40009 --misalign --dir build/wt41/new41 --once 2>&1 | tail -3
sh tests/gpu/build_driver.sh cross_entropy build/wt41/new41 build/s41/v_ce -L$CU/lib64/stubs -lcuda
timeout 120 compute-sanitizer --tool memcheck build/s41/v_ce R=3 C=32771 --dir build/wt41/new41 --once 2>&1 | tail -3
timeout 120 compute-sanitizer --tool racecheck build/s41/v_ce R=3 C=32771 --dir build/wt41/new41 --once 2>&1 | tail -3
echo "--- corpus ($(( $(date +%s) - t0 )) s)"
OUT=build/s41/corpus REPS=50 HEADLINE=1 DEADLINE=330 VJOBS=12 PJOBS=6 NO_EAGER=1 BASE=build/wt41/base41 \
	sh bench/corpus/run.sh cross_entropy row_argmax log_softmax softmax_wide row_meanvar_65536 row_max_65536 > build/s41/corpus.log 2>&1
echo "corpus rc $?"
cat build/s41/corpus/log.txt 2>/dev/null | tail -30
grep -E "^\| |geomean|above" build/s41/corpus/table.md
cp build/s41/corpus/base.txt build/s41/corpus/ours.txt build/s41/corpus/table.md $OUT/ 2>/dev/null
echo "done ($(( $(date +%s) - t0 )) s)"
