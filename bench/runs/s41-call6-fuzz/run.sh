#!/bin/sh
# Session 41, call 6: issue 27's generated-spec fuzz on the final code
# (merge 2f0fd4e: plan_stream, plan_argmax), seeds 200001.. in chunks of
# 2500 on a machine of many cores, until LIMIT seconds. The 10^5 run on
# 929a50c runs on this session's CPU (seeds 1..100000).
# Carry: build/fz41 (fuzz_specs and fusec, sanitized, built from 80cdeb2,
# whose fusec/ and runtime/ are the merge's).
set -u
OUT=${OUT:-/tmp/s41c6}
mkdir -p "$OUT"
exec >"$OUT/fuzz.txt" 2>&1
START=$(date +%s)
J=$(( $(nproc) - 1 ))
CC=clang; command -v clang >/dev/null || CC=gcc
CXX=g++; command -v g++ >/dev/null || CXX=clang++
echo "$(nproc) cores, $J jobs, cc $CC ($(command -v $CC)), c++ $CXX, ptxas $(command -v ptxas || echo /usr/local/cuda/bin/ptxas)"
P=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
for s in 200001 202501 205001 207501 210001 212501 215001 217501; do
	[ $(( $(date +%s) - START )) -lt ${LIMIT:-300} ] || { echo "stopped before seed $s (time)"; break; }
	build/fz41/fuzz_specs --seed $s --count 2500 --jobs $J --sample 500 --fusec build/fz41/fusec --ptxas $P --cc $CC --cxx $CXX --dir /tmp/fz 2>&1 | grep -v "^fuzz_specs: seconds"
	echo "--- chunk $s exit $? at $(( $(date +%s) - START )) s"
done
echo "=== done in $(( $(date +%s) - START )) s"
