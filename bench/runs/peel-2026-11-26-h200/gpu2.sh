#!/bin/sh
# Call 2 (issue 21, wt21): correctness of everything the change touched, then
# base/new timings interleaved for the chains that moved in call 1.
cd "$(dirname "$0")" || exit 2
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
O=${OUT:-/tmp/o2}; mkdir -p $O
W=/tmp/w2; rm -rf $W; mkdir -p $W/bin
start=$(date +%s)
el() { echo "[$(($(date +%s) - start))s] $*" >> $O/log.txt; }
drv() { # NAME DIR OUTBIN
	cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$1 -I$2 -I$CUDA_HOME/include -include $1.h \
		tests/gpu/validate.c $2/${1}_ref.c -L$CUDA_HOME/lib64/stubs -lcuda -lm -o $3
}
CS=$(command -v compute-sanitizer || echo $CUDA_HOME/bin/compute-sanitizer)
# 1. the shipped specs whose PTX changed: validate (3 sizes, misaligned) and compute-sanitizer
el "1: tests/gpu/run.sh add_rmsnorm groupnorm softmax"
OUT=$W timeout 110 sh tests/gpu/run.sh add_rmsnorm groupnorm softmax > $O/shipped.txt 2>&1; echo "exit $?" >> $O/shipped.txt
# 2. the codegen tests' artifacts at awkward sizes, aligned and misaligned, and memcheck
el "2: codegen tests"
drv cg_row_peel cg $W/bin/v_peel & drv cg_gather_stride cg $W/bin/v_gather & wait
{
for sz in "R=1 C=1" "R=3 C=5" "R=37 C=97" "R=37 C=96" "R=33 C=1001" "R=7 C=1024" "R=5 C=25001" "R=3 C=40003" "R=2 C=1048583"; do
	timeout 60 $W/bin/v_peel $sz --dir cg --seed 7 --reps 2; echo "exit $? peel $sz"
done
for sz in "R=37 C=97" "R=37 C=96" "R=33 C=1001" "R=7 C=1024" "R=3 C=40003"; do
	timeout 60 $W/bin/v_peel $sz --dir cg --seed 7 --reps 2 --misalign; echo "exit $? peel $sz misaligned"
done
for sz in "R=1 C=2 H=1" "R=3 C=16 H=8" "R=5 C=17 H=8" "R=4 C=64 H=32" "R=3 C=18 H=8" "R=5 C=40 H=12" "R=1031 C=4097 H=2048" "R=64 C=8192 H=4096"; do
	timeout 60 $W/bin/v_gather $sz --dir cg --seed 7 --reps 2; echo "exit $? gather $sz"
done
for sz in "R=3 C=16 H=8" "R=4 C=64 H=32"; do
	timeout 60 $W/bin/v_gather $sz --dir cg --seed 7 --reps 2 --misalign; echo "exit $? gather $sz misaligned"
done
for a in "v_peel R=33 C=1001 --misalign" "v_peel R=3 C=40003 --misalign" "v_peel R=37 C=97" "v_gather R=4 C=64 H=32" "v_gather R=3 C=16 H=8 --misalign"; do
	set -- $a; b=$1; shift
	timeout 60 $CS --tool memcheck --error-exitcode 9 $W/bin/$b "$@" --dir cg --reps 1 > $W/cs.txt 2>&1; echo "exit $? memcheck $a"; tail -n 3 $W/cs.txt
done
} > $O/cg.txt 2>&1
# 3. the corpus chains whose PTX changed and call 1 did not run: validation (CHECK sizes, misaligned, full size)
el "3: corpus validations"
CH="add_rmsnorm_bf16 softmax_bf16 group_norm instance_norm rmsnorm_f32 row_max_65536 row_meanvar_1024 row_meanvar_65536 row_stats_8192 row_sum_128 row_sumsq_32 small_ln_gelu softmax_scaled_masked top1"
WK=build/corpus-work; rm -rf $WK/v; mkdir -p $WK/bin $WK/v
python3 bench/corpus/harness.py --plan --gen bench/corpus/gen $CH > $W/plan.txt 2>&1
for n in $CH; do echo $n; done | xargs -P 8 -n 1 sh bench/corpus/run.sh --build-one
awk '$2 == "check" { k[$1]++; printf "%s check c%d", $1, k[$1]; for (i = 3; i <= NF; i++) printf " %s", $i; print "";
                     if (k[$1] == 2) { printf "%s misalign m%d", $1, k[$1]; for (i = 3; i <= NF; i++) printf " %s", $i; print "" } }
     $2 == "time" && !t[$1]++ { printf "%s full s0", $1; for (i = 3; i <= NF; i++) printf " %s", $i; print "" }' $W/plan.txt |
	timeout 80 xargs -P 4 -L 1 sh bench/corpus/run.sh --validate-one
cat $WK/v/*.tsv > $O/corpus_validate.tsv 2>/dev/null
cat $WK/v/*.txt | grep -v PASS | head -50 >> $O/corpus_validate.tsv
for a in "log_softmax R=37 C=1001 --misalign" "log_softmax R=5 C=40000 --misalign" "odd_cols_scale R=1031 C=4097 H=2048"; do
	set -- $a; n=$1; shift
	drv $n bench/corpus/gen $W/bin/m_$n 2>/dev/null
	timeout 60 $CS --tool memcheck --error-exitcode 9 $W/bin/m_$n "$@" --dir bench/corpus/gen --reps 1 > $W/cs.txt 2>&1; echo "exit $? memcheck $a" >> $O/cg.txt; tail -n 2 $W/cs.txt >> $O/cg.txt
done
# 4. base and new interleaved (A B A B), alone on the GPU
el "4: A/B timings"
AB="rmsnorm_bf16 add_rmsnorm_bf16 softmax_bf16 layernorm_affine"
for n in $AB; do drv $n bench/corpus/gen-base $W/bin/b_$n & drv $n bench/corpus/gen $W/bin/n_$n & done; wait
for rep in 1 2; do
	for line in "rmsnorm_bf16 R=32768 C=4096" "rmsnorm_bf16 R=65536 C=768" "add_rmsnorm_bf16 R=16384 C=4096" "softmax_bf16 R=32768 C=4096"; do
		set -- $line; n=$1; shift
		echo "base $rep $(timeout 30 $W/bin/b_$n "$@" --dir bench/corpus/gen-base --seed 7 --flush --time-only --reps 50 2>&1 | grep -o 'fused=[0-9.]*ms unfused=[0-9.]*ms') $line" >> $O/ab.txt
		echo "new  $rep $(timeout 30 $W/bin/n_$n "$@" --dir bench/corpus/gen --seed 7 --flush --time-only --reps 50 2>&1 | grep -o 'fused=[0-9.]*ms unfused=[0-9.]*ms') $line" >> $O/ab.txt
	done
done
el "done"
