#!/bin/sh
# Persistent pipelines on a GPU (tests/gpu/pipeline.c): correctness against
# launch-at-a-time runs and the float64 reference, the watchdog, timings,
# then compute-sanitizer memcheck, racecheck and synccheck on small sizes.
# usage: sh tests/gpu/pipeline.sh [OUTDIR]   (from the repository root; OUTDIR
# gets the logs, default build/gpu)
set -u
out=${1:-build/gpu}
mkdir -p "$out"
# the library from its sources: only a C compiler is needed (no make, no re2c)
lib=$(sed -n '/^RT_LIB_SRC/,/^[^ 	]/p' runtime/runtime.mk | grep -o 'runtime/[a-z_0-9]*\.c' | tr '\n' ' ')
${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iruntime -Igenerated -I"${CUDA_HOME:-/usr/local/cuda}/include" tests/gpu/pipeline.c \
   generated/belief_update_ref.c generated/spike_burst_ref.c generated/active_inference_step_ref.c $lib -ldl -lpthread -lm -o "$out/pipeline" || exit 1
status=0
"$out/pipeline" | tee "$out/pipeline.txt" || status=1
for tool in memcheck racecheck synccheck; do
	if compute-sanitizer --tool $tool --error-exitcode 9 "$out/pipeline" --quick > "$out/sanitizer_$tool.txt" 2>&1; then
		echo "PASS compute-sanitizer $tool: $(tail -1 "$out/sanitizer_$tool.txt")"
	else
		echo "FAIL compute-sanitizer $tool (see $out/sanitizer_$tool.txt)"; tail -5 "$out/sanitizer_$tool.txt"; status=1
	fi
done
exit $status
