#!/bin/sh
# Reductions over several trailing axes (issue 21), on a GPU machine, one call:
# validation of groupnorm (and the row specs around it) at awkward sizes,
# compute-sanitizer, the runtime's smoke test over the specs not yet run
# through libfuserun, then groupnorm timed (L2 flushed, as do_bench) beside
# F.group_norm and the textbook code, eager and compiled.
#   OUT=DIR sh bench/rowaxes.sh
set -u
O=${OUT:-build/rowaxes}
mkdir -p "$O"
GPU_PHASE=validate OUT=$O sh tests/gpu/run.sh groupnorm add_rmsnorm softmax colstats 2>&1 | tail -40 > "$O/validate.tail"
cp "$O/validate.txt" "$O/validate-specs.txt" 2>/dev/null
GPU_PHASE=sanitize sh tests/gpu/run.sh groupnorm 2>&1 | tail -8 > "$O/sanitize.txt"
OUT=$O timeout 200 sh runtime/tests/gpu.sh groupnorm attention attention_causal attention_lse add_rmsnorm colstats > "$O/runtime.out" 2>&1
for sz in "N=32 G=32 CG=16 HW=1024" "N=32 G=32 CG=16 HW=4096" "N=16 G=32 CG=8 HW=3136" "N=128 G=32 CG=4 HW=1024"; do
	build/gpu/v_groupnorm $sz --flush --time-only --reps 50 --seed 3 2>&1 | grep -v '^  '
done > "$O/ours.txt"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/groupnorm_peers.py 32,32,16,1024 32,32,16,4096 16,32,8,3136 128,32,4,1024 > "$O/peers.txt" 2>&1
tail -n 3 "$O/validate.tail" "$O/sanitize.txt"; tail -5 "$O/runtime.out"; cat "$O/ours.txt" "$O/peers.txt"
