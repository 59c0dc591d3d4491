#!/bin/sh
# Reductions over an outer axis split across blocks (issue 21), one GPU
# call: validate the specs that have such a kernel against their float64
# references (awkward sizes, misaligned, compute-sanitizer), the persistent
# pipeline over one (bit-identity, watchdog, sanitizers), then time them
# against the build before the split (OLD, default oldgen/: the committed
# artifacts of the parent commit, copied there) and PyTorch eager and
# torch.compile in the same run. Writes $OUT (default build/outer).
#   sh bench/outer.sh
set -u
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OLD=${OLD:-oldgen}
out=${OUT:-build/outer}
B=build/gpu
mkdir -p "$out" $B
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"

echo "== validate"
sh tests/gpu/run.sh colstats belief_update active_inference_step > "$out/validate.txt" 2>&1
echo "validate rc=$?"; grep -v '^  ' "$out/validate.txt" | grep -v PASS | head -20; tail -1 "$out/validate.txt"

echo "== pipelines"
sh tests/gpu/pipeline.sh "$B/pipe" > "$out/pipeline.txt" 2>&1
echo "pipeline rc=$?"; grep -E 'FAIL|PASS compute|belief' "$out/pipeline.txt" | head -30

echo "== timings (median of 100, L2 flushed before each run)"
drv() { # NAME DIR OUT
	$CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$1 -I$2 -I$CUDA_HOME/include -include $1.h \
		tests/gpu/validate.c $2/$1_ref.c -L$CUDA_HOME/lib64/stubs -lcuda -lm -o $3
}
for s in belief_update active_inference_step; do
	[ -f "$OLD/$s.h" ] && drv $s "$OLD" $B/old_$s
done
t() { # driver label args...
	d=$1 l=$2; shift 2
	printf '%-4s ' "$l"; $d "$@" --flush 2>&1 | grep -v '^  '
}
: > "$out/ours.txt"
for sz in "M=8192 N=8192" "M=65536 N=1024" "M=2048 N=2048"; do
	for s in belief_update active_inference_step; do
		# shellcheck disable=SC2086
		{ t $B/v_$s new $sz; [ -x $B/old_$s ] && t $B/old_$s old $sz --dir "$OLD"; t $B/v_$s new $sz; } | tee -a "$out/ours.txt"
	done
done
for sz in "N=65536 C=1024" "N=1048576 C=64" "N=8192 C=8192" "N=262144 C=256"; do
	# shellcheck disable=SC2086
	t $B/v_colstats new $sz | tee -a "$out/ours.txt"
done

echo "== PyTorch"
PYTHONUNBUFFERED=1 python3 bench/peers.py --only colstats,belief_update,ceilings --out "$out/peers.json" \
	--deadline-s 240 > "$out/peers.txt" 2>&1
echo "peers rc=$?"; tail -12 "$out/peers.txt"
