#!/bin/sh
# Attention artifacts of several folders side by side, one GPU call: build a
# validation driver against each folder's headers, validate the attention
# specs there (both PTX targets, awkward sizes), then time them at issue 22's
# sizes. Folders: $DIRS (default generated/ and build/attnvar/*, e.g. made
# with a modified fusec: bin/fusec -o build/attnvar/NAME specs/attention*.fuse).
#   make lib/libfuserun.a   (then carry lib)
#   DIRS="generated build/attnvar/x" OUT=out sh bench/attn_var.sh
set -u
out=${OUT:-build/attnout}; mkdir -p $out build/var
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/device.txt
for d in ${DIRS:-generated $(ls -d build/attnvar/*)}; do
  n=$(basename $d)
  for s in attention attention_causal attention_lse; do
    [ -f $d/$s.h ] || continue
    sh tests/gpu/build_driver.sh $s $d build/var/v_${s}_$n -L$CUDA_HOME/lib64/stubs -lcuda || echo "BUILD FAIL $n $s"
  done
done
for d in ${DIRS:-generated $(ls -d build/attnvar/*)}; do
  n=$(basename $d)
  for p in sm_90a sm_90; do
    for sz in "B=1 T=1 S=1 D=1" "B=3 T=129 S=251 D=67" "B=2 T=67 S=1031 D=33" "B=2 T=200 S=77 D=200" "B=4 T=1024 S=1024 D=64" "B=2 T=300 S=520 D=128"; do
      timeout 30 build/var/v_attention_$n $sz --dir $d --ptx $d/attention.$p.ptx 2>&1 | grep -v '^  ' | sed "s/^/VAL $n $p /"
    done
    timeout 30 build/var/v_attention_causal_$n B=2 T=1031 D=64 --dir $d --ptx $d/attention_causal.$p.ptx 2>&1 | grep -v '^  ' | sed "s/^/VAL $n $p causal /"
    timeout 30 build/var/v_attention_causal_$n B=3 T=129 D=67 --dir $d --ptx $d/attention_causal.$p.ptx 2>&1 | grep -v '^  ' | sed "s/^/VAL $n $p causal /"
    for sz in "T=129 S=251 D=67" "T=1000 S=1031 D=40" "T=300 S=77 D=200" "T=2048 S=2048 D=128"; do
      [ -x build/var/v_attention_lse_$n ] && timeout 30 build/var/v_attention_lse_$n $sz --dir $d --ptx $d/attention_lse.$p.ptx 2>&1 | grep -v '^  ' | sed "s/^/VAL $n $p lse /"
    done
  done
done > $out/val.txt 2>&1
grep -c "FAIL\|fail" $out/val.txt; grep -i "fail\|error" $out/val.txt | head -20
for sz in "B=32 T=1024 S=1024 D=64" "B=256 T=1024 S=1024 D=128" "B=32 T=4096 S=4096 D=128" "B=32 T=1024 S=1024 D=128"; do
  for d in ${DIRS:-generated $(ls -d build/attnvar/*)}; do n=$(basename $d)
    timeout 30 build/var/v_attention_$n $sz --dir $d --ptx $d/attention.sm_90a.ptx --flush --time-only --reps 50 2>&1 | grep -v '^  ' | sed "s/^/TIME $n /"
  done
done | tee $out/time.txt
for d in ${DIRS:-generated $(ls -d build/attnvar/*)}; do n=$(basename $d)
  timeout 30 build/var/v_attention_causal_$n B=32 T=4096 D=128 --dir $d --ptx $d/attention_causal.sm_90a.ptx --flush --time-only --reps 50 2>&1 | grep -v '^  ' | sed "s/^/TIME $n causal /"
done | tee -a $out/time.txt
