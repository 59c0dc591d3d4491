#!/bin/sh
# tc's second device call (issue 10), kept to about a minute: gelu with
# tanh.approx.f32 in the gelu tile specs (their epilogues' precision is
# bf16/f16) against the float64 reference (matmul_residual, whose PTX is new,
# on every path), the newcomer gelu_residual (precision f16) from artifacts
# carried in exp2/newc, timings beside torch eager and torch.compile, and
# 1024^3 with the tile width fixed at 128 (exp2/bn128: artifacts from a
# fusec whose fz_tile_bn returns 128) beside the committed rule. Writes
# $OUT/{call2.txt, tiles-peers2.json}.
#   sh bench/proto/tc_call2.sh            (on the device machine, repository root)
set -u
OUT=${OUT:-build/gpu-out}; export OUT
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
CS=$CUDA_HOME/bin/compute-sanitizer
mkdir -p "$OUT" build/gpu
log=$OUT/call2.txt
say() { echo "$*" | tee -a "$log"; }
t0=$(date +%s)
say "# tc device call 2, $(date -u '+%Y-%m-%d %H:%M UTC'), tree $(cat .tree 2>/dev/null || echo '?')"
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
# mk NAME DIR BIN: the validate.c driver for DIR's artifact NAME
mk() { ${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$1 -I$2 -I$CUDA_HOME/include -include $1.h \
	tests/gpu/validate.c $2/${1}_ref.c -L$CUDA_HOME/lib64/stubs -lcuda -lm -o $3; }
short() { sed -E 's/ +/ /g; s/ unfused_err[^ ]*//; s/ speedup.*//'; }

# validation: matmul_residual (new PTX) on every path at three sizes; the two
# gelu specs (PTX identical to call 1's validated experiment) on the TMA path
for s in linear_bias_gelu matmul_bias_gelu matmul_residual matmul_bias_relu matmul_bias_relu_bf16; do mk $s generated build/gpu/v_$s & done
mk gelu_residual exp2/newc build/gpu/x_newc &
for s in matmul_bias_relu matmul_bias_relu_bf16; do mk $s exp2/bn128 build/gpu/x_bn128_$s & done
wait
pass=0 fail=0
val() { o=$("$@" 2>&1) && pass=$((pass + 1)) || fail=$((fail + 1)); say "$(echo "$o" | short) [$*]"; }
for sz in "M=1 K=1 N=1" "M=129 K=67 N=251" "M=1000 K=1000 N=1000"; do
	val build/gpu/v_matmul_residual $sz --reps 3
	val build/gpu/v_matmul_residual $sz --reps 3 --no-tma
	val build/gpu/v_matmul_residual $sz --reps 3 --ptx generated/matmul_residual.sm_80.ptx
done
for s in linear_bias_gelu matmul_bias_gelu; do for sz in "M=127 K=131 N=257" "M=1000 K=1000 N=1000"; do val build/gpu/v_$s $sz --reps 3; done; done
for n in 1 1000003 16777216; do val build/gpu/x_newc N=$n --reps 3 --dir exp2/newc; done
say "validate: $pass passed, $fail failed ($(($(date +%s) - t0)) s)"

say "--- ours, L2 flushed before each timed run (fused / unfused ms)"
for r in 1 2 3; do
	for s in linear_bias_gelu matmul_residual; do say "$(build/gpu/v_$s M=4096 K=4096 N=4096 --reps 50 --flush --time-only 2>&1 | short)"; done
done
say "$(build/gpu/v_matmul_bias_gelu M=4096 K=4096 N=4096 --reps 50 --flush --time-only 2>&1 | short)"
for r in 1 2; do
	for s in matmul_bias_relu matmul_bias_relu_bf16; do
		say "rule $(build/gpu/v_$s M=1024 K=1024 N=1024 --reps 200 --flush --time-only 2>&1 | short)"
		say "bn128 $(build/gpu/x_bn128_$s M=1024 K=1024 N=1024 --reps 200 --flush --time-only --dir exp2/bn128 2>&1 | short)"
	done
done
say "ours done ($(($(date +%s) - t0)) s)"
PYTHONUNBUFFERED=1 timeout 35 python3 bench/tiles_peers.py --repeat 3 --out "$OUT/tiles-peers2.json" \
	linear_bias_gelu:4096 matmul_residual:4096 2>&1 |
	grep -E 'median|Error|error' | tee -a "$log"
say "done ($(($(date +%s) - t0)) s)"
