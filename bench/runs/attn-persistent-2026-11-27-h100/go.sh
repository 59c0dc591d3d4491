#!/bin/sh
# persistent attention (i22persist): validate, sanitize, time new vs main vs SDPA
set -u
P=build/attnp; G=$P/gen; S=$OUT/summary.txt; L="-L/usr/local/cuda/lib64/stubs -lcuda"
exec > $S 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for n in attention attention_causal attention_lse; do
  sh tests/gpu/build_driver.sh $n $G $P/v_$n $L || echo "BUILD FAIL new $n"
done
sh tests/gpu/build_driver.sh attention $P/old $P/o_attention $L || echo "BUILD FAIL old"
sh tests/gpu/build_driver.sh attention_causal $P/old $P/o_attention_causal $L || echo "BUILD FAIL old causal"
echo "== validation (new artifacts; sm_90a unless marked)"
: > $P/cmds
for ptx in sm_90a sm_90; do
  for sz in "B=1 T=1 S=1 D=1" "B=1 T=1 S=1 D=64" "B=3 T=129 S=251 D=67" "B=2 T=200 S=77 D=200" "B=2 T=67 S=1031 D=33" \
    "B=4 T=1024 S=1024 D=64" "B=2 T=300 S=520 D=128" "B=40 T=1000 S=300 D=64" "B=150 T=130 S=256 D=128" "B=140 T=128 S=200 D=256" \
    "B=32 T=1024 S=1024 D=64" "B=3 T=129 S=251 D=67 --misalign" "B=2 T=300 S=520 D=128 --scalar scale -0.7" \
    "B=2 T=300 S=520 D=128 --scalar scale 0" "B=140 T=200 S=256 D=64 --scalar scale -0.7"; do
    echo "$P/v_attention $sz --seed 7 --dir $G --ptx $G/attention.$ptx.ptx" >> $P/cmds
  done
  for sz in "B=1 T=1 D=1" "B=3 T=129 D=67" "B=2 T=200 D=200" "B=2 T=1031 D=64" "B=4 T=1024 D=128" "B=20 T=1031 D=64" \
    "B=12 T=1500 D=128" "B=2 T=1031 D=64 --scalar scale -0.7"; do
    echo "$P/v_attention_causal $sz --seed 7 --dir $G --ptx $G/attention_causal.$ptx.ptx" >> $P/cmds
  done
  for sz in "T=1 S=1 D=1" "T=129 S=251 D=67" "T=1000 S=1031 D=40" "T=300 S=77 D=200" "T=2048 S=2048 D=128" "T=20000 S=300 D=128" "T=20000 S=300 D=64"; do
    echo "$P/v_attention_lse $sz --seed 7 --dir $G --ptx $G/attention_lse.$ptx.ptx" >> $P/cmds
  done
done
i=0; while read -r c; do i=$((i+1)); echo "$c > $P/o$i.txt 2>&1; echo \$? > $P/o$i.rc; echo \"$c\" > $P/o$i.cmd" > $P/q$i.sh; done < $P/cmds
ls $P/q*.sh | xargs -P 12 -n 1 timeout 200 sh
pass=0; fail=0; j=0
while [ $j -lt $i ]; do j=$((j+1))
  if [ "$(cat $P/o$j.rc 2>/dev/null)" = 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAILED: $(cat $P/o$j.cmd)"; fi
  echo "# $(cat $P/o$j.cmd | sed 's|build/attnp/||g')"; grep -v '^  ' $P/o$j.txt | head -6
done
echo "validation: $pass passed, $fail failed"
echo "== timing (median of 50, L2 flushed): new vs main, then SDPA"
for sz in "B=32 T=1024 S=1024 D=64" "B=256 T=1024 S=1024 D=128" "B=32 T=4096 S=4096 D=128" "B=32 T=1024 S=1024 D=128"; do
  for k in new old; do
    if [ $k = new ]; then d=$G; v=$P/v_attention; else d=$P/old; v=$P/o_attention; fi
    $v $sz --dir $d --ptx $d/attention.sm_90a.ptx --flush --time-only --reps 50 2>&1 | grep -v '^  ' | sed "s/^/$k /"
  done
done
for k in new old; do
  if [ $k = new ]; then d=$G; v=$P/v_attention_causal; else d=$P/old; v=$P/o_attention_causal; fi
  $v B=32 T=4096 D=128 --dir $d --ptx $d/attention_causal.sm_90a.ptx --flush --time-only --reps 50 2>&1 | grep -v '^  ' | sed "s/^/$k causal /"
done
PYTHONUNBUFFERED=1 timeout 120 python3 $P/sdpa.py 32,1024,64 256,1024,128 32,4096,128 32,4096,128,causal 32,1024,128
# new again at the first size (drift check)
$P/v_attention B=32 T=1024 S=1024 D=64 --dir $G --ptx $G/attention.sm_90a.ptx --flush --time-only --reps 50 2>&1 | grep -v '^  ' | sed "s/^/new again /"
echo "== compute-sanitizer (new)"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tc in "memcheck v_attention B=3 T=129 S=251 D=67 --ptx $G/attention.sm_90a.ptx" "memcheck v_attention B=140 T=128 S=256 D=64 --ptx $G/attention.sm_90a.ptx" \
   "memcheck v_attention B=140 T=128 S=256 D=128 --ptx $G/attention.sm_90a.ptx --scalar scale -0.7" "memcheck v_attention_causal B=20 T=1031 D=64 --ptx $G/attention_causal.sm_90a.ptx" \
   "memcheck v_attention B=140 T=130 S=200 D=64 --ptx $G/attention.sm_90.ptx" "memcheck v_attention_lse T=20000 S=130 D=128 --ptx $G/attention_lse.sm_90a.ptx" \
   "racecheck v_attention B=3 T=129 S=251 D=67 --ptx $G/attention.sm_90a.ptx" "racecheck v_attention B=140 T=128 S=256 D=64 --ptx $G/attention.sm_90a.ptx" \
   "racecheck v_attention B=140 T=128 S=256 D=128 --ptx $G/attention.sm_90a.ptx --scalar scale -0.7" "racecheck v_attention_causal B=20 T=1031 D=64 --ptx $G/attention_causal.sm_90a.ptx" \
   "racecheck v_attention B=140 T=130 S=200 D=64 --ptx $G/attention.sm_90.ptx" "synccheck v_attention B=140 T=128 S=256 D=64 --ptx $G/attention.sm_90a.ptx"; do
  set -- $tc; tool=$1; b=$2; shift 2
  if timeout 100 $CS --tool $tool --error-exitcode 9 $P/$b "$@" --dir $G --reps 1 > $P/cs.txt 2>&1; then echo "cs $tool $b $*: clean"; else echo "cs $tool $b $*: FAILED rc=$?"; tail -15 $P/cs.txt; fi
done
echo done
