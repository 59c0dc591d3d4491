#!/bin/sh
# On a GPU machine: build a validation driver per spec from the committed
# artifacts, validate fused and unfused against the float64 reference at
# three sizes (one awkward), run compute-sanitizer over small cases, print
# one line per case and a summary. Needs only a C compiler and libcuda.
#   sh tests/gpu/run.sh [SPEC...]        (default: every spec)
# Results go to stdout and, when $OUT is set, to $OUT/validate.txt.
# GPU_PHASE=validate runs only the validations, GPU_PHASE=sanitize only
# compute-sanitizer (both together take longer than one device call);
# JOBS=N runs N validations at once (a GPU machine's cores: their float64
# references are the slow part), compute-sanitizer one at a time.
# DRY=1 prints each command ("+ ...") instead of running it, on any machine
# (tests/gpu_run_dry.sh checks the sizes against the manifests that way);
# only the near-tie unit test, which needs no GPU, runs all the same.
# A spec with no sizes below is a failure, never skipped.
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=build/gpu
DRY=${DRY:-}
specs=${*:-$(ls specs | sed 's/\.fuse$//')}
if [ -n "$DRY" ]; then log=/dev/null; else mkdir -p $B; log=${OUT:-$B}/validate.txt; : > "$log"; fi
pass=0 fail=0
PHASE=${GPU_PHASE:-all}
# JOBS=N: N validations at once (default 1); compute-sanitizer runs alone
JOBS=${JOBS:-1}
nq=0
[ -z "$DRY" ] && [ "$JOBS" -gt 1 ] && { rm -rf $B/q; mkdir -p $B/q; }
CLEAN=clean; [ -n "$DRY" ] && CLEAN="printed, not run (DRY)"

# What validate.c accepts as a near tie (tests/gpu/near_tie.h, issue 27),
# unit-tested first; it needs no GPU, so DRY mode runs it too, and make
# check's gpurun group (tests/gpu_run_dry.sh) sees a failure
nt=$(mktemp "${TMPDIR:-/tmp}/near_tie_test.XXXXXX") || exit 2
if ntout=$($CC -std=c11 -O2 tests/gpu/near_tie_test.c -lm -o "$nt" 2>&1 && "$nt" 2>&1); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
echo "$ntout" | tee -a "$log"
rm -f "$nt"

sizes() {
	case $1 in
	kl_divergence|prediction_error|vector_add|relu|sigmoid|tanh) echo "N=1 N=1000003 N=1000004 N=67108864" ;;
	add_rmsnorm) echo "R=1,C=1 R=37,C=1001 R=5,C=40000 R=16384,C=4096" ;; # 40000: streamed
	softmax) echo "R=1,C=1 R=37,C=1001 R=5,C=40000 R=8192,C=8192" ;; # 40000: streamed, wider than the registers
	# rows over two axes: one element, odd extents (the scalar path, gamma's
	# column split from the flat one), rows wider than the registers (streamed)
	groupnorm) echo "N=1,G=1,CG=1,HW=1 N=3,G=5,CG=7,HW=33 N=2,G=4,CG=16,HW=4096 N=2,G=3,CG=3,HW=50001 N=32,G=32,CG=16,HW=1024" ;;
	batchnorm_inference) echo "B=1,C=1 B=1001,C=37 B=37,C=1004 B=65536,C=1024" ;;
	# rows split over blocks: few columns (5: one tile, many shares), a
	# partial tile (1004), a share shorter than the rest (100003 rows)
	colstats) echo "N=1,C=1 N=1001,C=37 N=100003,C=5 N=4099,C=1004 N=65536,C=1024" ;;
	belief_update|active_inference_step) echo "M=1,N=1 M=1001,N=997 M=8192,N=8192" ;;
	gemv_axpby_sum) echo "M=1,N=1 M=1003,N=2049 M=16384,N=16384" ;;
	matmul_bias_relu|matmul_bias_gelu|matmul_bias_relu_bf16|matmul_residual|linear_bias_gelu|matmul_bias_tf32|matmul_at_bias_relu_bf16)
		echo "M=1,K=1,N=1 M=129,K=67,N=251 M=127,K=131,N=257 M=1024,K=1024,N=1024" ;;
	# fp8 (issue 25): K not a multiple of 16 (plain loads), one row of a long K, primes
	matmul_bias_relu_fp8) echo "M=1,K=1,N=1 M=129,K=67,N=251 M=127,K=131,N=257 M=7,K=4096,N=1024 M=1000,K=1000,N=1000 M=1024,K=1024,N=1024" ;;
	bmm_bias_relu) echo "Bt=1,M=1,K=1,N=1 Bt=3,M=129,K=67,N=251 Bt=4,M=512,K=256,N=384" ;;
	attn_scores) echo "Bt=1,M=1,D=1,N=1 Bt=3,M=129,D=67,N=251 Bt=8,M=512,D=128,N=512" ;;
	# head sizes of each bucket (64, 128, 256), odd ones (unaligned rows),
	# keys not a multiple of the 64-column step, one query, one key
	attention) echo "B=1,T=1,S=1,D=1 B=3,T=129,S=251,D=67 B=2,T=67,S=1031,D=33 B=2,T=200,S=77,D=200 B=4,T=1024,S=1024,D=64 B=2,T=300,S=520,D=128" ;;
	attention_causal) echo "B=1,T=1,D=1 B=3,T=129,D=67 B=2,T=200,D=200 B=2,T=1031,D=64 B=4,T=1024,D=128" ;;
	attention_lse) echo "T=1,S=1,D=1 T=129,S=251,D=67 T=1000,S=1031,D=40 T=300,S=77,D=200 T=2048,S=2048,D=128" ;;
	transfer_entropy) echo "N=1 N=2 N=5 N=997 N=8192" ;;
	# M query points of a series of N (validate.c --series: the queries are
	# the series' points off = N-M .., the last device's range)
	transfer_entropy_shard) echo "M=1,N=1 M=1,N=2 M=5,N=5 M=499,N=997 M=4096,N=8192" ;;
	spike_burst) echo "N=1,NP1=2,S=1,F=1 N=1009,NP1=1010,S=10090,F=10 N=1048576,NP1=1048577,S=104857600,F=10485" ;;
	# N neurons of a network of NP1-1 (base, where they start, drawn as
	# fuserun draws it), S synapses ending on them, F fired in the whole network
	spike_burst_shard) echo "N=1,NP1=3,S=1,F=1 N=1009,NP1=2019,S=10090,F=20 N=524288,NP1=1048577,S=52428800,F=10485" ;;
	esac
}

# a size at which the kernels take their 16-byte paths (innermost extent a
# multiple of 4, not of the block): where they would, a misaligned run and
# memcheck must exercise both the vector path and the scalar fallback
vsize() {
	case $1 in
	kl_divergence|prediction_error|vector_add|relu|sigmoid|tanh) echo "N=1000004" ;;
	batchnorm_inference) echo "B=37,C=1004" ;;
	*) sizes $1 | cut -d' ' -f2 ;;
	esac
}

run() { # spec args...
	s=$1; shift
	if [ -n "$DRY" ]; then echo "+ $B/v_$s $*"; pass=$((pass + 1)); return; fi
	if [ "$JOBS" -gt 1 ]; then # queued, run by run_queued below
		nq=$((nq + 1)); echo "$B/v_$s $* > $B/q/$nq.out 2>&1; echo \$? > $B/q/$nq.rc" > $B/q/$nq.sh; return
	fi
	if out=$("$B/v_$s" "$@" 2>&1); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	echo "$out" | tee -a "$log"
}

# the queued validations, JOBS at once (their float64 references run on the
# CPU, one core each), then their lines in the order they were queued
run_queued() {
	[ "$nq" -gt 0 ] || return 0
	i=0; while [ $i -lt $nq ]; do i=$((i + 1)); echo $B/q/$i.sh; done | xargs -P "$JOBS" -n 1 sh
	i=0; while [ $i -lt $nq ]; do i=$((i + 1))
		if [ "$(cat $B/q/$i.rc 2>/dev/null)" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
		tee -a "$log" < $B/q/$i.out
	done
}

# cs TOOL ARGS...: the driver under compute-sanitizer, its report appended to $B/cs.txt
cs() {
	tool=$1; shift
	if [ -n "$DRY" ]; then echo "+ compute-sanitizer --tool $tool --error-exitcode 9 $*"; return 0; fi
	$CS --tool $tool --error-exitcode 9 "$@" >> $B/cs.txt 2>&1
}

# every spec must have sizes: say so loudly, count it, and go on with the rest
checked=
for s in $specs; do
	if [ -n "$(sizes $s)" ]; then checked="$checked $s"; continue; fi
	fail=$((fail + 1))
	echo "FAIL $s: no sizes in tests/gpu/run.sh (add them to sizes(): the manifest's size lines, views and offsets valid); not validated" | tee -a "$log"
done
specs=$checked

# the drivers link libfuserun (tests/gpu/build_driver.sh): built once, here
if [ -z "$DRY" ] && ! make -s lib/libfuserun.a; then echo "FAIL: cannot build lib/libfuserun.a" | tee -a "$log"; exit 1; fi
for s in $specs; do
	if [ -n "$DRY" ]; then
		echo "+ sh tests/gpu/build_driver.sh $s generated $B/v_$s ..."
	else
		sh tests/gpu/build_driver.sh $s generated $B/v_$s -L$CUDA_HOME/lib64/stubs -lcuda || { fail=$((fail + 1)); continue; }
	fi
	[ "$PHASE" = sanitize ] && continue
	for sz in $(sizes $s); do
		run $s $(echo $sz | tr ',' ' ') --seed $$
	done
	# every tensor one element off 16-byte alignment: the scalar fallbacks
	run $s $(vsize $s | tr ',' ' ') --seed $$ --misalign
	if [ $s = transfer_entropy ]; then
		for series in independent coupled reverse; do
			run $s N=8192 --series $series --seed $$ --reps 20
		done
		for n in 16384 65536; do run $s N=$n --seed $$ --reps 10; done
	fi
	[ $s = transfer_entropy_shard ] && run $s M=4096 N=8192 --series coupled --seed $$ --reps 20
	# z's factor folded into the exponent (attn.cuh): a scale below 0 (Q
	# negated in shared memory) and of 0 (every row a plain mean of V)
	for v in -0.7 0; do
		[ $s = attention ] && run $s B=2 T=300 S=520 D=128 --scalar scale $v --seed $$
		[ $s = attention_causal ] && run $s B=2 T=1031 D=64 --scalar scale $v --seed $$
	done
done
run_queued
if [ "$PHASE" != validate ] && { [ -n "$DRY" ] || command -v compute-sanitizer >/dev/null 2>&1 || [ -x $CUDA_HOME/bin/compute-sanitizer ]; }; then
	CS=$(command -v compute-sanitizer || echo $CUDA_HOME/bin/compute-sanitizer)
	for s in $specs; do
		sz=$(sizes $s | cut -d' ' -f2 | tr ',' ' ')
		for tool in memcheck racecheck; do
			[ -n "$DRY" ] || : > $B/cs.txt
			if cs $tool $B/v_$s $sz --reps 2 &&
			   { [ $tool != memcheck ] || { cs memcheck $B/v_$s $(vsize $s | tr ',' ' ') --reps 2 &&
			     cs memcheck $B/v_$s $(vsize $s | tr ',' ' ') --reps 2 --misalign; }; }; then
				pass=$((pass + 1)); echo "compute-sanitizer $tool $s $sz$([ $tool = memcheck ] && echo " and $(vsize $s), aligned and misaligned"): $CLEAN" | tee -a "$log"
			else
				fail=$((fail + 1)); echo "compute-sanitizer $tool $s $sz: FAILED" | tee -a "$log"; tail -20 $B/cs.txt | tee -a "$log"
			fi
		done
		# tensor-core tiles: the TMA path too (the awkward size above loads with plain loads)
		case $s in matmul_*|linear_*) tz="M=256 K=128 N=512" ;; bmm_*) tz="Bt=3 M=200 K=128 N=512" ;; attn_*) tz="Bt=3 M=200 D=72 N=512" ;; *) tz= ;; esac
		[ -n "$tz" ] && for tool in memcheck racecheck synccheck; do
			[ -n "$DRY" ] || : > $B/cs.txt
			if cs $tool $B/v_$s $tz --reps 2; then
				pass=$((pass + 1)); echo "compute-sanitizer $tool $s $tz: $CLEAN" | tee -a "$log"
			else
				fail=$((fail + 1)); echo "compute-sanitizer $tool $s $tz: FAILED" | tee -a "$log"; tail -20 $B/cs.txt | tee -a "$log"
			fi
		done
	done
fi
echo "gpu${DRY:+ (DRY: commands printed, nothing run)}: $pass passed, $fail failed" | tee -a "$log"
[ $fail = 0 ]
