#!/bin/sh
# Session 40, call 7: issue 27's generated-spec fuzz, half of 10^5 on a
# machine of many cores (the CPU here has 2): seeds 50001..100000 of
# build/san/fuzz_specs (the final code's sanitized build: the fuzzer links
# fusec's front end, planner and writers; the sample's fusec runs NVRTC and
# ptxas), in chunks of 5000 so that a cut run still says which finished.
# Carry: build/san/fuzz_specs build/san/fusec (built from the final commit).
set -u
OUT=${OUT:-/tmp/s40c7}
mkdir -p "$OUT"
exec >"$OUT/fuzz.txt" 2>&1
START=$(date +%s)
J=$(( $(nproc) - 1 ))
CC=clang; command -v clang >/dev/null || CC=gcc
CXX=g++; command -v g++ >/dev/null || CXX=clang++
echo "$(nproc) cores, $J jobs, cc $CC ($(command -v $CC)), c++ $CXX, ptxas $(command -v ptxas || echo /usr/local/cuda/bin/ptxas)"
P=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
for s in 50001 55001 60001 65001 70001 75001 80001 85001 90001 95001; do
	[ $(( $(date +%s) - START )) -lt ${LIMIT:-300} ] || { echo "stopped before seed $s (time)"; break; }
	build/san/fuzz_specs --seed $s --count 5000 --jobs $J --sample 500 --fusec build/san/fusec --ptxas $P --cc $CC --cxx $CXX --dir /tmp/fz 2>&1 | grep -v "^fuzz_specs: seconds"
	echo "--- chunk $s exit $? at $(( $(date +%s) - START )) s"
done
echo "=== done in $(( $(date +%s) - START )) s"
