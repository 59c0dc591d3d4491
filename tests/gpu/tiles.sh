#!/bin/sh
# On a GPU machine: the tensor-core tile kernels (the matmul specs) on each
# of their paths against the float64 reference, then timed next to PyTorch
# eager and torch.compile in the same run. Paths: sm_90a wgmma fed by TMA
# (the default on compute capability 9.0), sm_90a with plain loads
# (--no-tma), and the sm_80 PTX's mma.sync (JIT-compiled by the driver).
#   [TILES_SPECS="spec ..."] sh tests/gpu/tiles.sh [validate|time|all]   (validate.c drivers; writes
#   $OUT/tiles.txt, or tiles-validate.txt / tiles-time.txt for one phase)
# The validation phase may share the GPU with other correctness work (its
# specs run in parallel, a CPU core each for their float64 references); the
# timing phase must have it alone. Timings with --flush are taken as
# triton's do_bench takes PyTorch's (bench/peers.py, bench/tiles_peers.py):
# a cold L2 and the host's launch work hidden behind a 256 MB memset.
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=${TILES_B:-build/gpu}
out=${OUT:-$B}
mkdir -p $B "$out"
make -s lib/libfuserun.a || exit 1 # the drivers link it (tests/gpu/build_driver.sh)
phase=${1:-all}
case $phase in validate|time) log=$out/tiles-$phase.txt ;; all) log=$out/tiles.txt ;; *) echo "usage: tiles.sh [validate|time|all]" >&2; exit 2 ;; esac
: > "$log"
pass=0 fail=0
rm -f $B/res_*
specs=${TILES_SPECS:-"matmul_bias_relu matmul_bias_gelu matmul_bias_relu_bf16 matmul_residual linear_bias_gelu bmm_bias_relu attn_scores
	matmul_bias_tf32 matmul_at_bias_relu_bf16 tf32_mk_nk tf32_km_nk tf32_km_kn tf32_bmm bf16_mk_nk bf16_km_nk f16_bmm_km
	matmul_bias_relu_fp8 fp8_bmm fp8_e5m2_mk_nk fp8_e5m2_bmm fp8_out_e4m3 fp8_out_e5m2_bmm"}
# the operand layouts and tf32 (issue 25): specs of tests/gpu/layouts, built here into $B/layouts
mkdir -p $B/layouts
for f in tests/gpu/layouts/*.fuse; do bin/fusec -o $B/layouts --arch=sm_80,sm_90,sm_90a "$f" 2>/dev/null || echo "FAIL fusec $f"; done
gen() { if [ -f tests/gpu/layouts/$1.fuse ]; then echo $B/layouts; else echo generated; fi; }
say() { echo "$*" | tee -a "$log"; }
# run SPEC ARGS...: one validate.c run, its line to stdout, ok or FAIL to $B/res_SPEC
run() {
	s=$1; shift
	if o=$("$B/v_$s" --dir $(gen $s) "$@" 2>&1); then r=ok; else r=FAIL; fi
	echo "$r" >> "$B/res_$s"
	echo "$o [$*]"
}
# validate SPEC: every size on every path
validate() {
	s=$1
	# 1; K odd (rows not 16-byte aligned: plain loads); primes; a whole tile (TMA);
	# M of 1 and N of 1 with K not a multiple of 64; a thin M; 1000^3.
	# Batched: the same shapes over several batches; M not a multiple of 128
	# with aligned rows (TMA rows run into the next batch); K of 72 (B(b,k,n):
	# plain loads; B(b,n,k): TMA). The small sizes take 128 x 64 tiles
	# (fz_tile_bn); on 132 SMs 2048 x 2048 takes 128 x 256 and 1536 x 1024
	# 128 x 128 (batched: Bt=8 1024 x 1024 and Bt=4 512 x 1024).
	case $s in
	bmm_bias_relu|tf32_bmm|f16_bmm_km|fp8_bmm|fp8_e5m2_bmm|fp8_out_e5m2_bmm) sizes="Bt=1,M=1,K=1,N=1 Bt=3,M=129,K=67,N=251 Bt=2,M=127,K=131,N=257 Bt=4,M=256,K=128,N=512 Bt=5,M=1,K=200,N=384
		Bt=2,M=263,K=328,N=1 Bt=7,M=100,K=64,N=96 Bt=3,M=200,K=72,N=136 Bt=2,M=300,K=264,N=260 Bt=8,M=1024,K=72,N=1024 Bt=4,M=512,K=136,N=1024" ;;
	attn_scores) sizes="Bt=1,M=1,D=1,N=1 Bt=3,M=129,D=67,N=251 Bt=2,M=127,D=131,N=257 Bt=4,M=256,D=128,N=512 Bt=5,M=1,D=200,N=384
		Bt=2,M=263,D=328,N=1 Bt=7,M=100,D=64,N=96 Bt=3,M=200,D=72,N=136 Bt=2,M=300,D=264,N=260 Bt=8,M=1024,D=72,N=1024 Bt=4,M=512,D=136,N=1024" ;;
	*) sizes="M=1,K=1,N=1 M=129,K=67,N=251 M=127,K=131,N=257 M=256,K=128,N=512 M=1,K=200,N=384 M=263,K=328,N=1
		M=7,K=1024,N=4096 M=1000,K=1000,N=1000 M=2048,K=136,N=2048 M=1536,K=200,N=1024" ;;
	esac
	for sz in $sizes; do
		sz=$(echo $sz | tr , ' ')
		run $s $sz --reps 3 --seed $$
		run $s $sz --reps 3 --seed $$ --no-tma
		run $s $sz --reps 3 --seed $$ --ptx $(gen $s)/$s.sm_80.ptx
	done
}
for s in $specs; do
	sh tests/gpu/build_driver.sh $s $(gen $s) $B/v_$s -L$CUDA_HOME/lib64/stubs -lcuda || { echo FAIL >> "$B/res_$s"; continue; }
	[ $phase = time ] || validate $s > "$B/val_$s.txt" &
done
wait
for s in $specs; do [ -f "$B/val_$s.txt" ] && [ $phase != time ] && cat "$B/val_$s.txt" | tee -a "$log"; done
if [ $phase != validate ]; then
# the timings: run's lines to the log (pass and fail counted below)
run() { s=$1; shift; if o=$("$B/v_$s" --dir $(gen $s) "$@" 2>&1); then r=ok; else r=FAIL; fi; echo "$r" >> "$B/res_$s"; say "$o [$*]"; }
say "--- timings, L2 flushed before each timed run (as do_bench): 1024^3 five times each, for a median and spread"
for r in 1 2 3 4 5; do
	for s in matmul_bias_relu matmul_bias_relu_bf16 linear_bias_gelu; do run $s M=1024 K=1024 N=1024 --reps 200 --flush --time-only; done
done
for s in matmul_bias_relu matmul_bias_relu_bf16 linear_bias_gelu matmul_bias_gelu; do
	run $s M=4096 K=4096 N=4096 --reps 100 --flush --time-only
	run $s M=4096 K=4096 N=4096 --reps 100 --flush --time-only
done
run matmul_bias_relu_bf16 M=8192 K=8192 N=8192 --time-only --reps 30 --flush
run matmul_bias_relu_fp8 M=8192 K=8192 N=8192 --time-only --reps 30 --flush
say "--- operand layouts (bf16 beside matmul_bias_relu_bf16's) and tf32 at 4096^3, L2 flushed (issue 25)"
for s in matmul_at_bias_relu_bf16 bf16_mk_nk bf16_km_nk matmul_bias_tf32 tf32_mk_nk tf32_km_nk; do run $s M=4096 K=4096 N=4096 --reps 60 --flush --time-only; done
say "--- timings as before (warm L2, the host's launch work inside the events)"
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
pass=$(cat $B/res_* 2>/dev/null | grep -c '^ok$')
fail=$(cat $B/res_* 2>/dev/null | grep -c '^FAIL$')
say "tiles: $pass passed, $fail failed"
[ $fail = 0 ]
