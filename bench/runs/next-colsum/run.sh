#!/bin/sh
# Issue 21, prepared in session 44 and NOT YET RUN (nvidia-h100-x1; carry lib):
# col_sum (s(c) = sum_n X(n,c), 1M x 64 f32) is at 80% of the copy floor and
# 1.07x torch.compile (session 43). Its outer-axis kernel reads 4 bytes a lane,
# a warp one row's 128 bytes of its block's 32 columns. Variants v4uK
# (hand-edited col_sum.f0.cu, built by mkvar.py): 16-byte loads, 8 lanes a row,
# a warp 4 rows at once, the loop unrolled K; the fold in a fixed order.
# Validated at the CHECK sizes and more, then timed alternately with the
# corpus artifact (base/). If one wins, the outer-axis emitter gets it
# (fusec/cuda/cuda_reduce.c), for every outer reduction, and the corpus is rerun.
O=${OUT:-build/nextcs}; mkdir -p $O build/var
D=bench/runs/next-colsum
L="-L/usr/local/cuda/lib64/stubs -lcuda"
for v in base v4u4 v4u8 v4u16; do sh tests/gpu/build_driver.sh col_sum $D/$v build/var/cs_$v $L || echo "BUILD FAIL $v"; done
for v in v4u4 v4u8 v4u16; do
  for sz in "N=1 C=64" "N=100003 C=63" "N=7 C=65" "N=4099 C=1" "N=100003 C=64" "N=7 C=96" "N=4099 C=32" "N=1048576 C=64" "N=33 C=4100"; do
    build/var/cs_$v $sz --dir $D/$v 2>&1 | grep -v '^  ' | sed "s/^/VAL $v /"
  done
done > $O/val.txt 2>&1
echo "val: $(grep -c PASS $O/val.txt) PASS, $(grep -vc PASS $O/val.txt) other" > $O/summary.txt
for r in 1 2 3; do
  for sz in "N=1048576 C=64" "N=4194304 C=64"; do
    for v in base v4u4 v4u8 v4u16; do
      echo "$v $sz $(build/var/cs_$v $sz --dir $D/$v --flush --time-only --reps 30 2>&1 | grep -o ' fused=[0-9.]*ms')"
    done
  done
done >> $O/summary.txt
compute-sanitizer --tool memcheck build/var/cs_v4u8 N=100003 C=64 --dir $D/v4u8 --once 2>&1 | tail -1 >> $O/summary.txt
cat $O/summary.txt; grep -v PASS $O/val.txt | head -5
