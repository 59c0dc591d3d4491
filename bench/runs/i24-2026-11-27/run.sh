#!/bin/sh
# Issue 24, Python's plain call on an H100 (branch i24dev): per call, the
# wall time over back-to-back calls minus `fuserun bench`'s median for the
# same kernel (bar: under 10 us), plain and out=, for softmax,
# kl_divergence, gemv_axpby_sum, add_rmsnorm and attention, with
# gpu_torch.py's correctness checks against the same chain in PyTorch (one
# process), and the host time alone (bench_overhead.py --torch --parts).
# Where build/i24base/python holds main's package (cb2819e), it runs beside
# this branch's in the same call, alternated: the machine's noise moved a
# call by 5-9 us between rounds before (bench/RESULTS.md).
#
# Before the run, on the CPU side (the carried paths):
#   make lib/libfuserun.so bin/fuserun
#   rm -rf build/i24base && mkdir -p build/i24base && git archive cb2819e python | tar -x -C build/i24base
# On the GPU machine, from the repository root:
#   sh bench/runs/i24-2026-11-27/run.sh        carry: lib bin build/i24base
# Writes one file, $OUT/summary.txt; about 60-90 s, cut at 115 s.
set -u
OUT=${OUT:-/tmp/i24-out}
mkdir -p "$OUT"
S=$OUT/summary.txt
exec >"$S" 2>&1
export FUSERUN_LIB=$(pwd)/lib/libfuserun.so FUSERUN=$(pwd)/bin/fuserun
unset FUSERUN_LIBCUDA
START=$(date +%s)
left() { echo $((115 - ($(date +%s) - START))); }

# part NAME EST CMD...: CMD under what is left of the 115 s, skipped when
# less than its estimate EST is left (so the summary is always written)
part() {
	_n=$1 _e=$2; shift 2
	_l=$(left)
	echo
	echo "=== $_n  (t=$(( $(date +%s) - START )) s, $_l s left)"
	if [ "$_l" -lt "$_e" ]; then echo "SKIPPED: $_l s left, it needs about $_e"; return; fi
	timeout "$_l" "$@"
	echo "--- exit $?"
}

echo "issue 24, Python's plain call: $(git rev-parse --short HEAD 2>/dev/null || echo '(no git)') $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -2
python3 -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version.split()[0])' 2>&1
[ -x "$FUSERUN" ] && [ -e "$FUSERUN_LIB" ] || { echo "MISSING: bin/fuserun or lib/libfuserun.so (carry lib and bin)"; exit 1; }
BASE=build/i24base/python
[ -d "$BASE/fuserun" ] || { echo "no $BASE: main's package not carried, no same-run baseline"; BASE=; }

C=softmax,kl_divergence,gemv_axpby_sum,add_rmsnorm,attention
# correctness and overhead: this branch, then main's, then this branch again
part "gpu_torch.py, this branch" 30 python3 python/tests/gpu_torch.py --chains $C
[ -n "$BASE" ] && part "gpu_torch.py, main's package" 30 python3 $BASE/tests/gpu_torch.py --chains $C
# host time alone (launch-bound sizes), alternated
part "bench_overhead --torch --parts, this branch" 12 python3 python/tests/bench_overhead.py --torch --calls 5000 --parts
[ -n "$BASE" ] && part "bench_overhead --torch, main's package" 8 python3 python/tests/bench_overhead.py --torch --calls 5000 --pkg $BASE
part "bench_overhead --torch, this branch (again)" 8 python3 python/tests/bench_overhead.py --torch --calls 5000
[ -n "$BASE" ] && part "bench_overhead --torch, main's package (again)" 8 python3 python/tests/bench_overhead.py --torch --calls 5000 --pkg $BASE
part "gpu_torch.py, this branch (again)" 30 python3 python/tests/gpu_torch.py --chains $C
echo
echo "=== done in $(( $(date +%s) - START )) s"
