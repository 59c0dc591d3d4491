#!/bin/sh
# GPU smoke test of the runtime, for a machine with a GPU: fuserun validate
# and fuserun bench for every spec at one medium size, the two examples, and
# compute-sanitizer memcheck over a few small runs when it is installed.
# Uses bin/fuserun, bin/active_inference and bin/spiking when present (built
# here, or carried), else builds them with $CC into build/rt-gpu (needs only
# a C compiler and cuda.h). Output: stdout, and $OUT/runtime-gpu.txt plus
# $OUT/runtime-bench.jsonl when $OUT is set.
#   sh runtime/tests/gpu.sh [SPEC...]
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
specs=${*:-$(ls specs | sed 's/\.fuse$//')}
dir=${OUT:-build}
mkdir -p "$dir"
log=$dir/runtime-gpu.txt json=$dir/runtime-bench.jsonl
: > "$log"; : > "$json"
pass=0 fail=0

FUSERUN=bin/fuserun AI=bin/active_inference SPIKING=bin/spiking
if [ ! -x $FUSERUN ] || [ ! -x $AI ] || [ ! -x $SPIKING ]; then
	B=build/rt-gpu
	mkdir -p $B
	echo "building fuserun and the examples into $B" | tee -a "$log"
	F="-std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iruntime -Iruntime/tool -Igenerated -I$CUDA_HOME/include"
	$CC $F runtime/*.c runtime/tool/*.c -ldl -lpthread -lm -o $B/fuserun &&
	$CC $F examples/active_inference.c runtime/*.c -ldl -lpthread -lm -o $B/active_inference &&
	$CC $F examples/spiking.c runtime/*.c -ldl -lpthread -lm -o $B/spiking || { echo "gpu smoke: build failed"; exit 2; }
	FUSERUN=$B/fuserun AI=$B/active_inference SPIKING=$B/spiking
fi

size() {
	case $1 in
	kl_divergence|prediction_error|vector_add|relu|sigmoid|tanh) echo "N=4000037" ;;
	softmax) echo "R=1024,C=1001" ;;
	batchnorm_inference) echo "B=4096,C=257" ;;
	belief_update) echo "M=2048,N=1999" ;;
	gemv_axpby_sum) echo "M=4096,N=4097" ;;
	matmul_bias_relu|matmul_bias_gelu) echo "M=512,K=256,N=384" ;;
	transfer_entropy) echo "N=2048" ;;
	spike_burst) echo "N=100003,NP1=100004,S=10000300,F=1000" ;;
	colstats) echo "N=4099,C=1004" ;;
	add_rmsnorm) echo "R=1000,C=4097" ;;
	groupnorm) echo "N=3,G=5,CG=7,HW=1033" ;;
	attention) echo "B=4,T=257,S=300,D=64" ;;
	attention_causal) echo "B=4,T=300,D=128" ;;
	attention_lse) echo "T=500,S=333,D=40" ;;
	*) echo "" ;;
	esac
}

run() { # name command...
	name=$1; shift
	out=$("$@" 2>&1)
	status=$?
	if [ $status = 0 ]; then pass=$((pass + 1)); r=ok; else fail=$((fail + 1)); r="FAILED (exit $status)"; fi
	{ echo "== $name: $r"; echo "$out"; } | tee -a "$log"
}

$FUSERUN --version | tee -a "$log"
for s in $specs; do
	sz=$(size $s)
	[ -n "$sz" ] || { echo "== $s: no size known, skipped" | tee -a "$log"; continue; }
	run "validate $s $sz" $FUSERUN validate $s --size $sz
	run "bench $s $sz" $FUSERUN bench $s --size $sz
	$FUSERUN bench $s --size $sz --json >> "$json" 2>> "$log"
done
run "example active_inference" $AI generated 2048 100
run "example spiking" $SPIKING generated 262144 50

CS=$(command -v compute-sanitizer || ls $CUDA_HOME/bin/compute-sanitizer 2>/dev/null)
if [ -n "$CS" ]; then
	run "memcheck validate spike_burst" $CS --tool memcheck --error-exitcode 9 $FUSERUN validate spike_burst --size N=1009,NP1=1010,S=10090,F=10
	run "memcheck validate softmax" $CS --tool memcheck --error-exitcode 9 $FUSERUN validate softmax --size R=37,C=1001
	run "memcheck bench kl_divergence" $CS --tool memcheck --error-exitcode 9 $FUSERUN bench kl_divergence --size N=100003 --reps 3
	run "memcheck spiking" $CS --tool memcheck --error-exitcode 9 $SPIKING generated 5000 5
	run "memcheck active_inference" $CS --tool memcheck --error-exitcode 9 $AI generated 256 5
fi
echo "gpu smoke: $pass passed, $fail failed" | tee -a "$log"
[ $fail = 0 ]
