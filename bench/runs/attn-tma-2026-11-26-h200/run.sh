#!/bin/sh
# i22c variants: validate (sm_90a; tma also sm_90 and misaligned), memcheck tma, time beside SDPA
set -u
V=build/attnvar/i22c; out=${OUT:-/tmp/o}; mkdir -p $out build/var
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
DIRS=${DIRS:-"generated $V/tma $V/tmaq $V/fold $V/poly"}
for d in $DIRS; do n=$(basename $d)
  for s in attention attention_causal attention_lse; do [ -f $d/$s.sm_90a.ptx ] || continue
    cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$s -I$d -I$CUDA_HOME/include -include $s.h $V/validate.c $d/${s}_ref.c -L$CUDA_HOME/lib64/stubs -lcuda -lm -o build/var/v_${s}_$n || echo "BUILD FAIL $n $s"
  done
done
for d in $DIRS; do n=$(basename $d)
  ps=sm_90a; [ $n = tmaq ] && ps="sm_90a sm_90"
  for p in $ps; do
    for sz in "B=1 T=1 S=1 D=1" "B=3 T=129 S=251 D=67" "B=2 T=200 S=77 D=200" "B=4 T=1024 S=1024 D=64" "B=2 T=300 S=520 D=128" "B=3 T=130 S=384 D=96" "B=2 T=257 S=129 D=64"; do
      timeout 60 build/var/v_attention_$n $sz --dir $d --ptx $d/attention.$p.ptx 2>&1 | grep -v '^  ' | sed "s/^/VAL $n $p /"
      [ $n = tmaq ] && timeout 60 build/var/v_attention_$n $sz --dir $d --ptx $d/attention.$p.ptx --misalign 2>&1 | grep -v '^  ' | sed "s/^/VAL $n $p misalign /"
    done
    for sz in "B=2 T=1031 D=64" "B=2 T=384 D=128"; do
      timeout 60 build/var/v_attention_causal_$n $sz --dir $d --ptx $d/attention_causal.$p.ptx 2>&1 | grep -v '^  ' | sed "s/^/VAL $n $p causal /"
    done
    [ -x build/var/v_attention_lse_$n ] && timeout 60 build/var/v_attention_lse_$n T=300 S=520 D=128 --dir $d --ptx $d/attention_lse.$p.ptx 2>&1 | grep -v '^  ' | sed "s/^/VAL $n $p lse /"
  done
done > $out/val.txt 2>&1
echo "val lines $(wc -l < $out/val.txt), fail $(grep -ci 'fail\|error\|mismatch' $out/val.txt)"; grep -i "fail\|error\|mismatch" $out/val.txt | head -10
if [ -n "${MC:-}" ]; then
  for a in "" "--misalign"; do
    compute-sanitizer --tool memcheck --error-exitcode 9 build/var/v_attention_tmaq B=2 T=300 S=520 D=128 --dir $V/tmaq --ptx $V/tmaq/attention.sm_90a.ptx --reps 2 $a > $out/mc$a.txt 2>&1; echo "memcheck tma $a rc=$?"
  done
  [ -n "${MCC:-}" ] && compute-sanitizer --tool memcheck --error-exitcode 9 build/var/v_attention_causal_tmaq B=2 T=384 D=64 --dir $V/tmaq --ptx $V/tmaq/attention_causal.sm_90a.ptx --reps 2 > $out/mcc.txt 2>&1; echo "memcheck tma causal rc=$?"
fi
export FZ_FUSED_ONLY=1
for rep in 1; do
for sz in "B=32 T=1024 S=1024 D=64" "B=256 T=1024 S=1024 D=128" "B=32 T=4096 S=4096 D=128" "B=32 T=1024 S=1024 D=128"; do
  for d in $DIRS; do n=$(basename $d)
    timeout 60 build/var/v_attention_$n $sz --dir $d --ptx $d/attention.sm_90a.ptx --flush --time-only --reps 30 2>&1 | grep -o " fused=[0-9.]*ms" | sed "s/^/TIME $n $sz /"
  done
done
for d in $DIRS; do n=$(basename $d)
  timeout 60 build/var/v_attention_causal_$n B=32 T=4096 D=128 --dir $d --ptx $d/attention_causal.sm_90a.ptx --flush --time-only --reps 30 2>&1 | grep -o " fused=[0-9.]*ms" | sed "s/^/TIME $n causal /"
done
done | tee $out/time.txt
PYTHONUNBUFFERED=1 timeout 200 python3 $V/sdpa.py 32,1024,64 256,1024,128 32,4096,128 32,4096,128,causal 32,1024,128 2>&1 | tail -6
