#!/bin/sh
# On a GPU machine: build a validation driver per spec from the committed
# artifacts, validate fused and unfused against the float64 reference at
# three sizes (one awkward), run compute-sanitizer over small cases, print
# one line per case and a summary. Needs only a C compiler and libcuda.
#   sh tests/gpu/run.sh [SPEC...]        (default: every spec)
# Results go to stdout and, when $OUT is set, to $OUT/validate.txt.
# GPU_PHASE=validate runs only the validations, GPU_PHASE=sanitize only
# compute-sanitizer (both together take longer than one device call).
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=build/gpu
mkdir -p $B
specs=${*:-$(ls specs | sed 's/\.fuse$//')}
log=${OUT:-$B}/validate.txt
: > "$log"
pass=0 fail=0
PHASE=${GPU_PHASE:-all}

sizes() {
	case $1 in
	kl_divergence|prediction_error|vector_add|relu|sigmoid|tanh) echo "N=1 N=1000003 N=1000004 N=67108864" ;;
	softmax) echo "R=1,C=1 R=37,C=1001 R=8192,C=8192" ;;
	batchnorm_inference) echo "B=1,C=1 B=1001,C=37 B=37,C=1004 B=65536,C=1024" ;;
	belief_update|active_inference_step) echo "M=1,N=1 M=1001,N=997 M=8192,N=8192" ;;
	gemv_axpby_sum) echo "M=1,N=1 M=1003,N=2049 M=16384,N=16384" ;;
	matmul_bias_relu|matmul_bias_gelu|matmul_bias_relu_bf16|matmul_residual|linear_bias_gelu)
		echo "M=1,K=1,N=1 M=129,K=67,N=251 M=127,K=131,N=257 M=1024,K=1024,N=1024" ;;
	bmm_bias_relu) echo "Bt=1,M=1,K=1,N=1 Bt=3,M=129,K=67,N=251 Bt=4,M=512,K=256,N=384" ;;
	attn_scores) echo "Bt=1,M=1,D=1,N=1 Bt=3,M=129,D=67,N=251 Bt=8,M=512,D=128,N=512" ;;
	transfer_entropy) echo "N=1 N=2 N=5 N=997 N=8192" ;;
	spike_burst) echo "N=1,NP1=2,S=1,F=1 N=1009,NP1=1010,S=10090,F=10 N=1048576,NP1=1048577,S=104857600,F=10485" ;;
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
	if out=$("$B/v_$s" "$@" 2>&1); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	echo "$out" | tee -a "$log"
}

for s in $specs; do
	$CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$s -Igenerated -I$CUDA_HOME/include -include $s.h \
		tests/gpu/validate.c generated/${s}_ref.c -L$CUDA_HOME/lib64/stubs -lcuda -lm -o $B/v_$s || { fail=$((fail + 1)); continue; }
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
done
if [ "$PHASE" != validate ] && { command -v compute-sanitizer >/dev/null 2>&1 || [ -x $CUDA_HOME/bin/compute-sanitizer ]; }; then
	CS=$(command -v compute-sanitizer || echo $CUDA_HOME/bin/compute-sanitizer)
	for s in $specs; do
		sz=$(sizes $s | cut -d' ' -f2 | tr ',' ' ')
		for tool in memcheck racecheck; do
			if $CS --tool $tool --error-exitcode 9 $B/v_$s $sz --reps 2 > $B/cs.txt 2>&1 &&
			   { [ $tool != memcheck ] || { $CS --tool memcheck --error-exitcode 9 $B/v_$s $(vsize $s | tr ',' ' ') --reps 2 >> $B/cs.txt 2>&1 &&
			     $CS --tool memcheck --error-exitcode 9 $B/v_$s $(vsize $s | tr ',' ' ') --reps 2 --misalign >> $B/cs.txt 2>&1; }; }; then
				pass=$((pass + 1)); echo "compute-sanitizer $tool $s $sz$([ $tool = memcheck ] && echo " and $(vsize $s), aligned and misaligned"): clean" | tee -a "$log"
			else
				fail=$((fail + 1)); echo "compute-sanitizer $tool $s $sz: FAILED" | tee -a "$log"; tail -20 $B/cs.txt | tee -a "$log"
			fi
		done
		# tensor-core tiles: the TMA path too (the awkward size above loads with plain loads)
		case $s in matmul_*|linear_*) tz="M=256 K=128 N=512" ;; bmm_*) tz="Bt=3 M=200 K=128 N=512" ;; attn_*) tz="Bt=3 M=200 D=72 N=512" ;; *) tz= ;; esac
		[ -n "$tz" ] && for tool in memcheck racecheck synccheck; do
			if $CS --tool $tool --error-exitcode 9 $B/v_$s $tz --reps 2 > $B/cs.txt 2>&1; then
				pass=$((pass + 1)); echo "compute-sanitizer $tool $s $tz: clean" | tee -a "$log"
			else
				fail=$((fail + 1)); echo "compute-sanitizer $tool $s $tz: FAILED" | tee -a "$log"; tail -20 $B/cs.txt | tee -a "$log"
			fi
		done
	done
fi
echo "gpu: $pass passed, $fail failed" | tee -a "$log"
[ $fail = 0 ]
