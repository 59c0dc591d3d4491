#!/bin/sh
# Row chains across row widths on a GPU machine: ours, fused and unfused
# (tests/gpu/validate.c: validated against the float64 reference, then
# timed), beside torch eager and torch.compile (bench/chains/peers.py), at
# R x C = 2^26 f32 elements for each width C. softmax comes from generated/,
# the other chains from bench/chains/gen (made beforehand with bin/fusec).
#   WIDTHS="32 64 ... 65536" CHAINS="softmax rownorm layernorm" sh bench/rows.sh
set -u
O=${OUT:-build/rows}
CHAINS=${CHAINS:-softmax rownorm layernorm}
WIDTHS=${WIDTHS:-32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536}
N=${N:-67108864}
mkdir -p "$O" build/gpu
: > "$O/rows.txt"
peers=
for s in $CHAINS; do
	d=generated
	[ -f generated/$s.manifest ] || d=bench/chains/gen
	cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$s -I$d -I/usr/local/cuda/include -include $s.h \
		tests/gpu/validate.c $d/${s}_ref.c -L/usr/local/cuda/lib64/stubs -lcuda -lm -o build/gpu/v_$s || continue
	for w in $WIDTHS; do
		build/gpu/v_$s R=$((N / w)) C=$w --dir $d --seed 11 --reps 50 2>&1 | grep -v '^  ' | tee -a "$O/rows.txt"
		peers="$peers $s:$((N / w)),$w"
	done
done
PYTHONUNBUFFERED=1 timeout ${PEER_TIMEOUT:-300} python3 bench/chains/peers.py $peers 2>&1 | grep -E "^peer|Error" | tee -a "$O/rows.txt"
