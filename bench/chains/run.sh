#!/bin/sh
# Chains not in specs/ (bench/chains/*.fuse), written as a newcomer would:
# validated at awkward and large sizes, timed fused and unfused, beside torch
# eager and torch.compile. Writes $OUT. The artifacts are made beforehand on
# a machine with fusec (the GPU machine may have no re2c/lemon), and carried:
#   for s in rownorm layernorm crossentropy; do bin/fusec -o bench/chains/gen --arch=sm_80,sm_90,sm_90a bench/chains/$s.fuse; done
# (bench/rows.sh and bench/rowwide.sh time and validate them across row widths)
set -u
O=${OUT:-build/chains}
mkdir -p $O build/gpu
: > $O/chains.txt
for s in rownorm layernorm; do
	cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$s -Ibench/chains/gen -I/usr/local/cuda/include -include $s.h \
		tests/gpu/validate.c bench/chains/gen/${s}_ref.c -L/usr/local/cuda/lib64/stubs -lcuda -lm -o build/gpu/v_$s || continue
	for sz in "R=1 C=1" "R=37 C=1001" "R=37 C=1004 --misalign" "R=65536 C=128" "R=8192 C=1024" "R=8192 C=8192" "R=1024 C=32768"; do
		build/gpu/v_$s $sz --dir bench/chains/gen --seed 7 2>&1 | grep -v '^  ' | tee -a $O/chains.txt
	done
	compute-sanitizer --tool memcheck --error-exitcode 9 build/gpu/v_$s R=37 C=1001 --dir bench/chains/gen --reps 2 > /dev/null 2>&1 && echo "memcheck $s: clean" | tee -a $O/chains.txt || echo "memcheck $s: FAILED" | tee -a $O/chains.txt
done
PYTHONUNBUFFERED=1 timeout 120 python3 bench/chains/peers.py rownorm:65536,128 rownorm:8192,1024 rownorm:8192,8192 rownorm:1024,32768 \
	layernorm:8192,1024 layernorm:8192,8192 softmax:8192,8192 softmax:65536,1024 2>&1 | grep -E "^peer|Error" | tee -a $O/chains.txt
