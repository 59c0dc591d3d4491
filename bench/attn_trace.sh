#!/bin/sh
# Where an attention block's cycles go (issue 22), on the GPU: per block,
# clock64 at its start, Q landed, step 0 done, the loop's end and O written,
# the gap to the block before it on its SM; per step, each computing
# warpgroup's wait for K/V, ping-pong turn, issue, S wait, softmax, PV wait
# and rescale+pack. The counters live in bench/attn_trace.patch (never in
# an artifact). The patch applies to 142f0df's attn.cuh (the kernel before it
# became persistent and was split into attn*.cuh), not to main's: for main's
# kernel, bench/runs/s44-attn/ncu.sh samples the warps' stalls a SASS
# instruction (it found the computing warps waiting for Q, session 44).
# Made on the CPU, in a checkout of 142f0df with the patch applied:
#   patch -p1 < bench/attn_trace.patch && make bin/fusec
#   bin/fusec -o build/attnvar/NAME specs/attention.fuse
#   (cd build/attnvar/NAME && nvcc -arch=sm_90a -ptx -std=c++17 -DFZ_ATTN_TRACE \
#      -diag-suppress 177 attention.cu -o attention.sm_90a.ptx)
# (-DFZ_ATTN_PP=0: no ping-pong; -DFZ_ATTN_NOSM: no softmax, the products alone;
# timing variants, not valid results), then on the GPU, carrying build/attnvar:
#   TR="build/attnvar/NAME ..." sh bench/attn_trace.sh
# The last block of the sixth launch prints the means (cycles); the
# timings of a traced build are not the kernel's.
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
mkdir -p build/var
for d in $TR; do n=$(basename $d)
	cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=attention -I$d -I$CUDA_HOME/include -include attention.h \
		tests/gpu/validate.c $d/attention_ref.c -L$CUDA_HOME/lib64/stubs -lcuda -lm -o build/var/vt_$n || echo "BUILD FAIL $n"
done
# SIZES: sizes separated by ';'
sizes=${SIZES:-"B=32 T=1024 S=1024 D=64;B=256 T=1024 S=1024 D=128;B=32 T=4096 S=4096 D=128"}
echo "$sizes" | tr ';' '\n' | while read -r sz; do
	for d in $TR; do n=$(basename $d)
		echo "== $n $sz"
		timeout 60 build/var/vt_$n $sz --dir $d --ptx $d/attention.sm_90a.ptx --time-only --reps 10 2>&1 | grep -E "^(TRACE|STEP)|rror|FAIL"
	done
done
