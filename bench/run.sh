#!/bin/sh
# One run on a GPU machine, one table: our fused and unfused kernels (the
# per-spec validation drivers, which also check them against the float64
# reference), PyTorch eager and torch.compile on the same chains and sizes
# (bench/peers.py), and the measured copy ceiling. Writes $OUT (or build/bench):
# ours.txt, peers.json, table.md.
#   sh bench/run.sh
set -u
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
out=${OUT:-build/bench}
B=build/gpu
mkdir -p "$out" $B
: > "$out/ours.txt"
ours() { # spec args...
	s=$1; shift
	[ -x $B/v_$s ] || $CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$s -Igenerated -I$CUDA_HOME/include \
		-include $s.h tests/gpu/validate.c generated/${s}_ref.c -L$CUDA_HOME/lib64/stubs -lcuda -lm -o $B/v_$s
	$B/v_$s "$@" 2>&1 | grep -v '^  ' | tee -a "$out/ours.txt"
}
ours kl_divergence N=67108864
ours prediction_error N=67108864
ours belief_update M=8192 N=8192
ours gemv_axpby_sum M=16384 N=16384
ours softmax R=8192 C=8192
ours matmul_bias_relu M=4096 K=4096 N=4096 --time-only --reps 20
ours matmul_bias_relu M=1024 K=1024 N=1024
ours matmul_bias_gelu M=4096 K=4096 N=4096 --time-only --reps 20
ours matmul_bias_gelu M=1024 K=1024 N=1024
ours matmul_bias_relu_bf16 M=1024 K=1024 N=1024
ours matmul_bias_relu_bf16 M=4096 K=4096 N=4096 --time-only --reps 20
ours matmul_bias_relu_bf16 M=8192 K=8192 N=8192 --time-only --reps 20
ours matmul_residual M=4096 K=4096 N=4096 --time-only --reps 20
ours linear_bias_gelu M=1024 K=1024 N=1024
ours linear_bias_gelu M=4096 K=4096 N=4096 --time-only --reps 20
ours bmm_bias_relu Bt=8 M=2048 K=2048 N=2048 --time-only --reps 20
ours attn_scores Bt=32 M=1024 N=1024 D=128 --time-only --reps 20
ours transfer_entropy N=8192
ours transfer_entropy N=16384 --reps 20
ours transfer_entropy N=65536 --reps 5 --time-only
ours spike_burst N=100000 NP1=100001 S=10000000 F=1000
ours spike_burst N=500000 NP1=500001 S=50000000 F=5000
ours spike_burst N=1048576 NP1=1048577 S=104857600 F=10485
for s in relu sigmoid tanh vector_add; do ours $s N=67108864; done
ours batchnorm_inference B=65536 C=1024
PYTHONUNBUFFERED=1 python3 bench/peers.py --out "$out/peers.json" --deadline-s 300 > "$out/peers.txt" 2>&1
python3 bench/table.py "$out/ours.txt" "$out/peers.json" > "$out/table.md"
cat "$out/table.md"
