#!/bin/sh
# Session 40, call 2 (H100, one call): issue 21's online max and sum of
# exponentials on streamed rows, and issue 24's context push skipped.
#  1. bench/corpus/run.sh on the 6 chains the pairing reaches (headline
#     sizes; ours, then the pre-change artifacts of build/base-on right after,
#     then torch.compile): validation at every CHECK size, misaligned and at
#     SIZES[0]
#  2. logsumexp_8192 and specs/softmax validated at widths that stream
#     (> 24576 columns), primes and misaligned; compute-sanitizer memcheck
#     on the streamed path (cross_entropy, softmax)
#  3. python/tests/gpu_torch.py twice and bench_overhead.py --torch --parts
# Before (CPU side): make lib/libfuserun.a lib/libfuserun.so bin/fuserun;
#   bench/corpus/gen rebuilt for those chains by the new fusec; build/base-on
#   the same chains by the old one (git stash; make bin/fusec; fusec -o).
# Carry: lib bin bench/corpus/gen build/base-on. Writes 6 files to $OUT.
set -u
OUT=${OUT:-/tmp/s40c2}
mkdir -p "$OUT"
LIMIT=${LIMIT:-560}
START=$(date +%s)
left() { echo $((LIMIT - ($(date +%s) - START))); }
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export FUSERUN_LIB=$(pwd)/lib/libfuserun.so FUSERUN=$(pwd)/bin/fuserun
S=$OUT/summary.txt
exec >"$S" 2>&1
echo "s40 call 2: $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CH="cross_entropy log_softmax logsumexp_8192 softmax_bf16 softmax_scaled_masked softmax_wide"
echo "=== 1. corpus (t=$(( $(date +%s) - START )))"
C=build/s40-corpus
OUT=$C HEADLINE=1 BASE=build/base-on DEADLINE=300 VJOBS=8 PJOBS=6 NO_EAGER=1 timeout 320 sh bench/corpus/run.sh $CH
echo "--- exit $?"
for f in table.md ours.txt base.txt validate.tsv; do [ -f $C/$f ] && cp $C/$f $OUT/corpus-$f; done
grep -c PASS $C/validate.tsv; grep -v PASS $C/validate.tsv
echo "=== 2. wide validations (t=$(( $(date +%s) - START )), $(left) s left)"
V=build/corpus-work/bin
for sz in "R=3 C=40009" "R=2 C=100003"; do
	for m in "" --misalign; do timeout 60 $V/v_logsumexp_8192 $sz --dir bench/corpus/gen --seed 11 --reps 3 $m | tail -2; echo "--- logsumexp_8192 $sz $m: exit $?"; done
done
mkdir -p build/s40x
sh tests/gpu/build_driver.sh softmax generated build/s40x/v_softmax -L$CUDA_HOME/lib64/stubs -lcuda || echo "softmax driver: no build"
for sz in "R=1 C=1" "R=7 C=30011" "R=3 C=65539" "R=64 C=4096" "R=5 C=24577"; do
	for m in "" --misalign; do timeout 60 build/s40x/v_softmax $sz --dir generated --seed 5 --reps 3 $m | tail -2; echo "--- softmax $sz $m: exit $?"; done
done
echo "=== memcheck (t=$(( $(date +%s) - START )), $(left) s left)"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build/s40x/v_softmax R=3 C=40009 --dir generated --once --misalign 2>&1 | tail -3
echo "--- memcheck softmax: exit $?"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $V/v_cross_entropy R=3 C=32771 --dir bench/corpus/gen --once 2>&1 | tail -3
echo "--- memcheck cross_entropy: exit $?"
echo "=== 3. python (t=$(( $(date +%s) - START )), $(left) s left)"
for i in 1 2; do [ "$(left)" -gt 45 ] && timeout 60 python3 python/tests/gpu_torch.py 2>&1 | tail -12; done
[ "$(left)" -gt 40 ] && PYTHONPATH=python timeout 40 python3 python/tests/bench_overhead.py --torch --parts 2>&1 | tail -24
echo "=== done in $(( $(date +%s) - START )) s"
