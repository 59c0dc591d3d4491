#!/bin/sh
# Call 3 (issue 21, wt21): the peeled cache's loads unconditional. Ours before
# (gen-base) timed alone, then run.sh (validate, time, torch) for TIMED, then
# validations of the other row chains, the shipped specs and the codegen tests.
cd "$(dirname "$0")" || exit 2
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
O=${OUT:-/tmp/o3}; mkdir -p $O
W=/tmp/w3; rm -rf $W; mkdir -p $W/bin
start=$(date +%s)
el() { echo "[$(($(date +%s) - start))s] $*" >> $O/log.txt; }
drv() { cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$1 -I$2 -I$CUDA_HOME/include -include $1.h \
		tests/gpu/validate.c $2/${1}_ref.c -L$CUDA_HOME/lib64/stubs -lcuda -lm -o $3; }
CS=$(command -v compute-sanitizer || echo $CUDA_HOME/bin/compute-sanitizer)
TIMED="log_softmax softmax_bf16 rmsnorm_bf16 add_rmsnorm_bf16 layernorm_affine logsumexp_8192"
el "1: base timings"
python3 bench/corpus/harness.py --plan --gen bench/corpus/gen-base $TIMED > $W/plan_base.txt 2>&1
for n in $TIMED; do drv $n bench/corpus/gen-base $W/bin/vb_$n & done; wait
awk '$2 == "time"' $W/plan_base.txt | while read -r n what sz; do
	timeout 30 $W/bin/vb_$n $sz --dir bench/corpus/gen-base --seed 7 --flush --time-only --reps 50 >> $O/ours_base.txt 2>&1 || echo "ERROR $n $sz" >> $O/ours_base.txt
done
el "2: run.sh $TIMED"
OUT=$W/run DEADLINE=130 VJOBS=8 sh bench/corpus/run.sh $TIMED > $W/run.log 2>&1
cp $W/run/table.md $O/table.md; cat $W/run/log.txt >> $O/log.txt
tar czf $O/run.tgz -C $W run plan_base.txt
el "3: validations of the other row chains"
VAL="softmax_wide cross_entropy row_argmax group_norm instance_norm rmsnorm_f32 row_max_65536 row_meanvar_1024 row_meanvar_65536 row_stats_8192 row_sum_128 row_sumsq_32 small_ln_gelu softmax_scaled_masked top1"
WK=build/corpus-work; rm -rf $WK/v; mkdir -p $WK/bin $WK/v
python3 bench/corpus/harness.py --plan --gen bench/corpus/gen $VAL > $W/plan.txt 2>&1
for n in $VAL; do echo $n; done | xargs -P 8 -n 1 sh bench/corpus/run.sh --build-one
awk '$2 == "check" { k[$1]++; printf "%s check c%d", $1, k[$1]; for (i = 3; i <= NF; i++) printf " %s", $i; print "";
                     if (k[$1] == 2) { printf "%s misalign m%d", $1, k[$1]; for (i = 3; i <= NF; i++) printf " %s", $i; print "" } }
     $2 == "time" && !t[$1]++ { printf "%s full s0", $1; for (i = 3; i <= NF; i++) printf " %s", $i; print "" }' $W/plan.txt |
	timeout 90 xargs -P 8 -L 1 sh bench/corpus/run.sh --validate-one
cat $WK/v/*.tsv > $O/validate_other.tsv 2>/dev/null
el "4: shipped specs"
OUT=$W GPU_PHASE=validate timeout 60 sh tests/gpu/run.sh add_rmsnorm groupnorm softmax > $O/shipped.txt 2>&1; echo "exit $?" >> $O/shipped.txt
for a in "softmax R=37 C=1001 --misalign" "add_rmsnorm R=37 C=1001 --misalign" "groupnorm N=3 G=5 CG=7 HW=33 --misalign" "softmax R=5 C=40000 --misalign"; do
	set -- $a; n=$1; shift
	timeout 40 $CS --tool memcheck --error-exitcode 9 build/gpu/v_$n "$@" --reps 1 > $W/cs.txt 2>&1; echo "exit $? memcheck $a" >> $O/shipped.txt; tail -n 1 $W/cs.txt >> $O/shipped.txt
done
el "5: codegen tests"
drv cg_row_peel cg $W/bin/v_peel
{
for sz in "R=1 C=1" "R=3 C=5" "R=37 C=97" "R=37 C=96" "R=33 C=1001" "R=7 C=1024" "R=5 C=25001"; do
	timeout 60 $W/bin/v_peel $sz --dir cg --seed 7 --reps 2; echo "exit $? peel $sz"
	timeout 60 $W/bin/v_peel $sz --dir cg --seed 7 --reps 2 --misalign; echo "exit $? peel $sz misaligned"
done
timeout 60 $CS --tool memcheck --error-exitcode 9 $W/bin/v_peel R=33 C=1001 --misalign --dir cg --reps 1 > $W/cs.txt 2>&1; echo "exit $? memcheck peel R=33 C=1001 misaligned"; tail -n 1 $W/cs.txt
timeout 60 $CS --tool memcheck --error-exitcode 9 $W/bin/v_peel R=37 C=96 --dir cg --reps 1 > $W/cs.txt 2>&1; echo "exit $? memcheck peel R=37 C=96"; tail -n 1 $W/cs.txt
} > $O/cg.txt 2>&1
el "done"
