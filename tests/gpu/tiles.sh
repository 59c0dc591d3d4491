#!/bin/sh
# On a GPU machine: the tensor-core tile kernels (the matmul specs) on each
# of their paths against the float64 reference, then timed next to PyTorch
# eager and torch.compile in the same run. Paths: sm_90a wgmma fed by TMA
# (the default on compute capability 9.0), sm_90a with plain loads
# (--no-tma), and the sm_80 PTX's mma.sync (JIT-compiled by the driver).
#   sh tests/gpu/tiles.sh [validate|time|all]   (validate.c drivers; writes
#   $OUT/tiles.txt, or tiles-validate.txt / tiles-time.txt for one phase)
# The validation phase may share the GPU with other correctness work; the
# timing phase must have it alone.
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=${TILES_B:-build/gpu}
out=${OUT:-$B}
mkdir -p $B "$out"
phase=${1:-all}
case $phase in validate|time) log=$out/tiles-$phase.txt ;; all) log=$out/tiles.txt ;; *) echo "usage: tiles.sh [validate|time|all]" >&2; exit 2 ;; esac
: > "$log"
pass=0 fail=0
specs="matmul_bias_relu matmul_bias_gelu matmul_bias_relu_bf16 matmul_residual linear_bias_gelu bmm_bias_relu attn_scores"
say() { echo "$*" | tee -a "$log"; }
run() { # spec args...
	s=$1; shift
	if o=$("$B/v_$s" "$@" 2>&1); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	say "$o [$*]"
}
for s in $specs; do
	$CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$s -Igenerated -I$CUDA_HOME/include -include $s.h \
		tests/gpu/validate.c generated/${s}_ref.c -L$CUDA_HOME/lib64/stubs -lcuda -lm -o $B/v_$s || { fail=$((fail + 1)); continue; }
	[ $phase = time ] && continue
	# 1; K odd (rows not 16-byte aligned: plain loads); primes; a whole tile (TMA);
	# M of 1 and N of 1 with K not a multiple of 64; a thin M; 1000^3.
	# Batched: the same shapes over several batches; M not a multiple of 128
	# with aligned rows (TMA rows run into the next batch); K of 72 (B(b,k,n):
	# plain loads; B(b,n,k): TMA)
	case $s in
	bmm_bias_relu) sizes="Bt=1,M=1,K=1,N=1 Bt=3,M=129,K=67,N=251 Bt=2,M=127,K=131,N=257 Bt=4,M=256,K=128,N=512 Bt=5,M=1,K=200,N=384
		Bt=2,M=263,K=328,N=1 Bt=7,M=100,K=64,N=96 Bt=3,M=200,K=72,N=136 Bt=2,M=300,K=264,N=260" ;;
	attn_scores) sizes="Bt=1,M=1,D=1,N=1 Bt=3,M=129,D=67,N=251 Bt=2,M=127,D=131,N=257 Bt=4,M=256,D=128,N=512 Bt=5,M=1,D=200,N=384
		Bt=2,M=263,D=328,N=1 Bt=7,M=100,D=64,N=96 Bt=3,M=200,D=72,N=136 Bt=2,M=300,D=264,N=260" ;;
	*) sizes="M=1,K=1,N=1 M=129,K=67,N=251 M=127,K=131,N=257 M=256,K=128,N=512 M=1,K=200,N=384 M=263,K=328,N=1
		M=7,K=1024,N=4096 M=1000,K=1000,N=1000" ;;
	esac
	for sz in $sizes; do
		sz=$(echo $sz | tr , ' ')
		run $s $sz --reps 3 --seed $$
		run $s $sz --reps 3 --seed $$ --no-tma
		run $s $sz --reps 3 --seed $$ --ptx generated/$s.sm_80.ptx
	done
done
if [ $phase != validate ]; then
say "--- timings (fused = the tile kernel with its epilogue)"
run matmul_bias_relu M=1024 K=1024 N=1024 --reps 200
run matmul_bias_relu M=4096 K=4096 N=4096 --time-only --reps 100
run matmul_bias_relu_bf16 M=1024 K=1024 N=1024 --reps 200
run matmul_bias_relu_bf16 M=4096 K=4096 N=4096 --time-only --reps 100
run matmul_bias_relu_bf16 M=8192 K=8192 N=8192 --time-only --reps 30
run matmul_bias_gelu M=4096 K=4096 N=4096 --time-only --reps 100
run matmul_residual M=4096 K=4096 N=4096 --time-only --reps 100
run linear_bias_gelu M=1024 K=1024 N=1024 --reps 200
run linear_bias_gelu M=4096 K=4096 N=4096 --time-only --reps 100
run linear_bias_gelu M=8192 K=8192 N=8192 --time-only --reps 30
run linear_bias_gelu M=4096 K=4096 N=4096 --time-only --reps 20 --ptx generated/linear_bias_gelu.sm_80.ptx
run bmm_bias_relu Bt=8 M=2048 K=2048 N=2048 --time-only --reps 50
run attn_scores Bt=32 M=1024 N=1024 D=128 --time-only --reps 50
run matmul_bias_relu M=4096 K=4096 N=4096 --time-only --reps 20 --no-tma
run matmul_bias_relu M=4096 K=4096 N=4096 --time-only --reps 20 --ptx generated/matmul_bias_relu.sm_80.ptx
run matmul_bias_relu_bf16 M=8192 K=8192 N=8192 --time-only --reps 10 --ptx generated/matmul_bias_relu_bf16.sm_80.ptx
if command -v cuobjdump >/dev/null 2>&1 || [ -x $CUDA_HOME/bin/cuobjdump ]; then
	$CUDA_HOME/bin/ptxas -arch=sm_90a generated/matmul_bias_relu.sm_90a.ptx -o $B/mbr.cubin &&
		say "SASS of matmul_bias_relu.sm_90a: $($CUDA_HOME/bin/cuobjdump -sass $B/mbr.cubin | grep -o 'HGMMA\.[0-9x]*' | sort | uniq -c | tr '\n' ' ')"
fi
fi
say "tiles: $pass passed, $fail failed"
[ $fail = 0 ]
