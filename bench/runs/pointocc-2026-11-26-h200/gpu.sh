#!/bin/sh
# point kernels: the built PTX against its vector path alone (vec_mb4: the
# same launch bound; vec_mb8: 8 blocks of 256 an SM, <= 32 registers)
O=${OUT:-/tmp/o}; R=$O/ptxexp.txt; : > $R
E=build/ptxexp; G=$E/gen; V=$E/var
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $R
make -s lib/libfuserun.a >> $R 2>&1
CH="rotary_bf16 bias_gelu_f16 swiglu_f16 bcast_mid_bf16 geglu_f16"
for c in $CH; do sh tests/gpu/build_driver.sh $c $G $E/v_$c -L/usr/local/cuda/lib64/stubs -lcuda >> $R 2>&1 & done; wait
sz() { case $1 in
 rotary_bf16) echo "B=16 H=32 T=2048 D=128|B=4 H=32 T=8192 D=64|B=2 H=3 T=7 D=64";;
 bias_gelu_f16) echo "R=16384 C=8192|R=4096 C=4096|R=37 C=1000";;
 swiglu_f16) echo "R=8192 H=8192|R=4096 H=2816|R=37 H=1000";;
 geglu_f16) echo "R=8192 C=8192|R=4096 C=2816|R=37 C=1000";;
 bcast_mid_bf16) echo "B=32 T=2048 C=2048|B=8 T=512 C=1024|B=3 T=5 C=64";; esac; }
ls -la $E >> $R; which cc >> $R; ls /usr/local/cuda/lib64/stubs/libcuda.so >> $R 2>&1
echo "== validation (the checked sizes: the small aligned one and SIZES[1])" >> $R
for c in $CH; do
  s0=$(sz $c | cut -d'|' -f1); s1=$(sz $c | cut -d'|' -f2); s2=$(sz $c | cut -d'|' -f3)
  for p in $G/$c.sm_90.ptx $V/$c.vec_mb4.sm_90.ptx $V/$c.vec_mb8.sm_90.ptx; do
    for s in "$s2" "$s1"; do
      # shellcheck disable=SC2086
      echo "$(basename $p) $s: $($E/v_$c $s --dir $G --ptx $p --seed 5 --reps 2 2>&1 | head -3 | cut -c1-160)" >> $R &
    done
  done
done; wait
echo "== timing (ms fused, --flush --time-only --reps 100, two rounds)" >> $R
for round in 1 2; do for c in $CH; do
  for i in 1 2; do s=$(sz $c | cut -d'|' -f$i)
    for p in $G/$c.sm_90.ptx $V/$c.vec_mb4.sm_90.ptx $V/$c.vec_mb8.sm_90.ptx; do
      # shellcheck disable=SC2086
      t=$($E/v_$c $s --dir $G --ptx $p --flush --time-only --reps 100 2>&1 | grep -o 'fused=[0-9.]*ms' | head -1)
      echo "r$round $c [$s] $(basename $p): $t" >> $R
    done
  done
done; done
cat $R | tail -70
