#!/bin/sh
# Session 42, call 1 (nvidia-h100-x4): issue 26's spiking exchanges on 4
# GPUs (bench/runs/i26b-2026-11-27/run.sh, under 300 s), then issue 27's
# generated-spec fuzz on the machine's cores (seeds FROM.. in chunks of
# 2500, until LIMIT seconds of the whole call), with the sanitized
# fuzz_specs and fusec built from this tree (the seed-65777 fix).
#   run from the repository root: sh bench/runs/s42-call1-x4/run.sh
#   carry: build/fz42
set -u
O=${OUT:-/tmp/s42c1}
mkdir -p "$O/i26b"
START=$(date +%s)
if [ "${SKIP26:-0}" = 0 ]; then
	OUT=$O/i26b sh bench/runs/i26b-2026-11-27/run.sh > "$O/i26b/log.txt" 2>&1
	echo "issue 26 part: exit $? at $(( $(date +%s) - START )) s" > "$O/steps.txt"
fi
J=$(( $(nproc) - 1 ))
CC=gcc CXX=g++
P=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
F=$O/fuzz.txt
echo "$(nproc) cores, $J jobs, ptxas $P" > "$F"
s=${FROM:-1}
while [ "$s" -le "${TO:-100000}" ]; do
	[ $(( $(date +%s) - START )) -lt ${LIMIT:-560} ] || { echo "stopped before seed $s (time)" >> "$F"; break; }
	timeout $(( ${LIMIT:-560} - ($(date +%s) - START) )) build/fz42/fuzz_specs --seed $s --count ${COUNT:-2500} --jobs $J --sample ${SAMPLE:-100} --fusec build/fz42/fusec --ptxas $P --cc $CC --cxx $CXX --dir /tmp/fz >> "$F" 2>&1
	echo "--- chunk $s exit $? at $(( $(date +%s) - START )) s" >> "$F"
	s=$(( s + ${COUNT:-2500} ))
done
echo "=== done in $(( $(date +%s) - START )) s" >> "$F"
grep -c "^FINDING" "$F" | sed 's/^/findings: /' >> "$O/steps.txt"
