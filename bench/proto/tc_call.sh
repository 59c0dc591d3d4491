#!/bin/sh
# One device call for the tensor-core tiles (issue 10): validation of every
# tile spec on every path (tests/gpu/tiles.sh validate), compute-sanitizer on
# the tile widths fz_tile_bn picks, then alone on the GPU our timings
# (tiles.sh time), PyTorch eager and torch.compile on the same chains
# repeated (bench/tiles_peers.py) and the measured ceilings (bench/peers.py),
# and an Nsight Compute profile of the bias+gelu and bias+relu epilogues at
# 4096^3 bf16. Writes $OUT/{call.txt,tiles-validate.txt,tiles-time.txt,
# tiles-peers.json,ceilings.json,ncu.txt}; prints the summary last.
#   sh bench/proto/tc_call.sh            (on the device machine, repository root)
set -u
OUT=${OUT:-build/gpu-out}; export OUT
mkdir -p "$OUT" build/gpu
CS=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
NCU=$(command -v ncu || echo ${CUDA_HOME:-/usr/local/cuda}/bin/ncu)
log=$OUT/call.txt
say() { echo "$*" | tee -a "$log"; }
t0=$(date +%s)
say "# tc device call $(date -u '+%Y-%m-%d %H:%M UTC'), tree $(cat .tree 2>/dev/null || echo '?')"
say "$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader)"

timeout 110 sh tests/gpu/tiles.sh validate > /dev/null 2>&1
say "validate: $(tail -n 1 "$OUT/tiles-validate.txt") ($(($(date +%s) - t0)) s)"
grep -v PASS "$OUT/tiles-validate.txt" | grep -v '^tiles:' | head -20 | tee -a "$log"

# compute-sanitizer: 128 x 64 tiles (plain loads at K = 67, TMA at 256 x 128 x 512),
# 128 x 128 (1536 x 1024), B(n,k) and batched
sc=0 sf=0
san() { # tool spec args...
	tool=$1; s=$2; shift 2
	o=$(timeout 30 "$CS" --tool "$tool" --error-exitcode 9 build/gpu/v_$s "$@" --reps 1 2>&1)
	rc=$?
	if [ $rc = 0 ] && echo "$o" | grep -Eq "(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)"; then sc=$((sc + 1)); r=clean; else sf=$((sf + 1)); r="NOT CLEAN (rc $rc)"; fi
	say "sanitize $tool $s $*: $r"
	[ "$r" = clean ] || echo "$o" | tail -n 15 >> "$log"
}
san memcheck matmul_bias_relu M=129 K=67 N=251
san memcheck matmul_bias_relu M=256 K=128 N=512
san memcheck matmul_bias_relu M=1536 K=200 N=1024
san memcheck linear_bias_gelu M=129 K=67 N=251
san memcheck bmm_bias_relu Bt=3 M=129 K=67 N=251
san racecheck matmul_bias_relu M=256 K=128 N=512
san synccheck matmul_bias_relu M=256 K=128 N=512
san memcheck matmul_bias_relu M=129 K=67 N=251 --ptx generated/matmul_bias_relu.sm_80.ptx
say "sanitize: $sc clean, $sf not ($(($(date +%s) - t0)) s)"

timeout 70 sh tests/gpu/tiles.sh time > /dev/null 2>&1
say "time: $(tail -n 1 "$OUT/tiles-time.txt") ($(($(date +%s) - t0)) s)"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/tiles_peers.py --repeat 5 --out "$OUT/tiles-peers.json" \
	matmul_bias_relu:1024 matmul_bias_relu_bf16:1024 linear_bias_gelu:1024 \
	matmul_bias_relu:4096 matmul_bias_relu_bf16:4096 linear_bias_gelu:4096 2>&1 | grep -E 'median|Error|error' | tee -a "$log"
say "peers done ($(($(date +%s) - t0)) s)"

# experiments carried beside the tree (exp/VARIANT/: artifacts from a fusec
# with one change), validated at two sizes and timed at 4096^3 beside the
# committed artifacts
if [ -d exp ]; then
	for d in exp/*/; do
		v=$(basename $d)
		for m in $d*.manifest; do
			s=$(basename $m .manifest)
			${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$s -I$d -I${CUDA_HOME:-/usr/local/cuda}/include -include $s.h \
				tests/gpu/validate.c $d${s}_ref.c -L${CUDA_HOME:-/usr/local/cuda}/lib64/stubs -lcuda -lm -o build/gpu/x_${v}_$s || continue
			for sz in "M=129 K=67 N=251"; do
				say "exp $v $(build/gpu/x_${v}_$s $sz --reps 3 --dir $d 2>&1 | sed -E 's/ +/ /g; s/ unfused_err.*fused=/ fused=/; s/ speedup.*//')"
			done
			for r in 1; do
				say "exp $v $(build/gpu/x_${v}_$s M=4096 K=4096 N=4096 --reps 100 --flush --time-only --dir $d 2>&1 | sed -E 's/ +/ /g; s/fused_err.*fused=([0-9.]+ms) unfused=([0-9.]+ms).*/fused=\1 unfused=\2/')"
				say "base $v $(build/gpu/v_$s M=4096 K=4096 N=4096 --reps 100 --flush --time-only 2>&1 | sed -E 's/ +/ /g; s/fused_err.*fused=([0-9.]+ms) unfused=([0-9.]+ms).*/fused=\1 unfused=\2/')"
			done
		done
	done
	say "experiments done ($(($(date +%s) - t0)) s)"
fi

# profiles: one launch of each 4096^3 bf16 fused kernel
for s in linear_bias_gelu matmul_bias_relu_bf16; do
	timeout 30 "$NCU" -k regex:${s}_f0 --launch-skip 2 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
		--section InstructionStats \
		build/gpu/v_$s M=4096 K=4096 N=4096 --reps 1 --time-only >> "$OUT/ncu.txt" 2>&1
done
say "ncu done ($(($(date +%s) - t0)) s)"
grep -E 'PASS|FAIL' "$OUT/tiles-time.txt" | sed -E 's/ +/ /g; s/fused_err.*fused=([0-9.]+ms) unfused=([0-9.]+ms).*\[/fused=\1 unfused=\2 [/' | tee -a "$log"
