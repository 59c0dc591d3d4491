#!/bin/sh
# Session 43, call 4 (H100): the row lanes in closed form, rows a block by a
# shift, and a point index divided by a power of two as a shift (fz_pow2),
# against the same chains built before (build/corpus-base), in one call:
#   1. the corpus at its headline sizes, ours and the baseline alternately,
#      torch.compile in the same call; every CHECK size validated;
#   2. compute-sanitizer memcheck on rotary (power-of-two and odd D),
#      logsumexp (odd widths, misaligned);
#   3. the shipped specs validated (tests/gpu/run.sh validate), time allowing.
#   carry bench/corpus/gen build/corpus-base lib bin; writes 6 files to $OUT
O=${OUT:-build/s43c4}; mkdir -p $O; S=$O/summary.txt; : > $S
say() { printf '%s\n' "$*" | tee -a "$S"; }
t0=$(date +%s)
el() { say "[t=$(( $(date +%s) - t0 ))s] $*"; }
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
say "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(date -u '+%Y-%m-%d %H:%M UTC')"
C=build/s43c4-corpus
OUT=$C HEADLINE=1 BASE=build/corpus-base DEADLINE=${CORPUS_S:-440} PJOBS=8 VJOBS=12 NO_EAGER=1 sh bench/corpus/run.sh > $C.log 2>&1
cp $C/table.md $C/base.txt $C/validate.tsv $C/ours.txt $O/ 2>/dev/null
say "validations: $(grep -c 'PASS$' $C/validate.tsv) passed, $(grep -vc 'PASS$' $C/validate.tsv) not"
grep -v 'PASS$' $C/validate.tsv | head -5 | tee -a $S
el corpus
W=build/corpus-work/bin
for a in "rotary_bf16 B=2 H=3 T=7 D=64" "rotary_bf16 B=1 H=5 T=13 D=126" "rotary_bf16 B=2 H=2 T=5 D=12" "logsumexp_8192 R=3 C=8191" "logsumexp_8192 R=5 C=4096"; do
	set -- $a; n=$1; shift
	for m in "" --misalign; do
		compute-sanitizer --tool memcheck --error-exitcode 9 $W/v_$n "$@" --dir bench/corpus/gen --reps 1 $m > $O/cs.txt 2>&1
		say "memcheck $n $* $m: rc=$? $(grep -c PASS $O/cs.txt) PASS lines, $(tail -1 $O/cs.txt)"
	done
done
rm -f $O/cs.txt
el sanitizer
left=$(( ${TOTAL_S:-570} - ($(date +%s) - t0) ))
if [ $left -gt 60 ]; then
	JOBS=12 GPU_PHASE=validate timeout $((left - 10)) sh tests/gpu/run.sh > $O/gpu_validate.txt 2>&1
	say "shipped specs (rc $?): $(grep -E 'passed|failed' $O/gpu_validate.txt | tail -1)"
	grep -E '^FAIL' $O/gpu_validate.txt | head -5 | tee -a $S
fi
el done
