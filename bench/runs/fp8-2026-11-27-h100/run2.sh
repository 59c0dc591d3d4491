#!/bin/sh
S=build/i25fp8; L=$OUT/fp8b.txt; G=$S/gen
nvidia-smi --query-gpu=name --format=csv,noheader > $L
v() { echo "+ $*" >> $L; timeout 120 "$@" >> $L 2>&1; echo "rc=$?" >> $L; }
echo "--- fp8_bmm f32 out, tol 1e-2 (fp8 fast accumulation)" >> $L
for z in "Bt=2 M=512 K=4096 N=384" "Bt=1 M=256 K=8192 N=256" "Bt=1 M=128 K=16384 N=256"; do v $S/v_bmm $z --dir $G --seed 5 --reps 2 -v; done
echo "--- main spec again, new drivers" >> $L
for z in "M=7 K=4096 N=1024" "M=1000 K=1000 N=1000" "M=1 K=1 N=1"; do v $S/v_fp8 $z --dir $G --seed 11 --reps 2; done
echo "--- SASS" >> $L
ptxas -arch=sm_90a $G/matmul_bias_relu_fp8.sm_90a.ptx -o /tmp/a.cubin && cuobjdump -sass /tmp/a.cubin | grep -o "QGMMA[.A-Z0-9x]*\|HGMMA[.A-Z0-9x]*" | sort | uniq -c >> $L
echo "--- timing 8192^3, L2 flushed, interleaved" >> $L
for r in 1 2 3; do v $S/v_fp8 M=8192 K=8192 N=8192 --dir $G --time-only --flush --reps 100; v $S/v_bf16 M=8192 K=8192 N=8192 --dir $G --time-only --flush --reps 100; done
echo done >> $L
