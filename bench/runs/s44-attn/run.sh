#!/bin/sh
# Issue 22, session 44 (nvidia-h100-x1): Q's buffer given back after the
# last S and O stored from the fragments (build/attnvar/v1, made by a
# modified fusec: bin/fusec -o build/attnvar/v1 specs/attention*.fuse)
# against main's generated/: validation at awkward sizes on both PTX
# targets, timings at issue 22's sizes with SDPA in the same call,
# memcheck and racecheck on v1. Carry build/attnvar.
O=${OUT:-build/s44attn}; mkdir -p $O
t0=$(date +%s)
DIRS="generated build/attnvar/v1" OUT=build/s44a sh bench/attn_var.sh > build/s44a.log 2>&1
grep -c "PASS" build/s44a/val.txt > $O/val_count.txt; grep -ci "fail" build/s44a/val.txt >> $O/val_count.txt
cp build/s44a/val.txt build/s44a/time.txt $O/
for sz in "B=3 T=129 S=251 D=67" "B=2 T=300 S=520 D=128" "B=140 T=128 S=200 D=256" "B=40 T=1000 S=300 D=64"; do
  for m in "" --misalign; do
    timeout 30 build/var/v_attention_v1 $sz --dir build/attnvar/v1 --ptx build/attnvar/v1/attention.sm_90a.ptx $m 2>&1 | grep -v '^  ' | sed "s/^/VAL2 $m /"
  done
done >> $O/val.txt
echo "VAL2: $(grep VAL2 $O/val.txt | grep -c PASS) pass, $(grep VAL2 $O/val.txt | grep -ci fail) fail" >> $O/log.txt
echo "[t=$(( $(date +%s) - t0 ))s] var done" >> $O/log.txt
python3 bench/attn_peers.py $O/peers.json 32,1024,64 256,1024,128 32,4096,128 32,4096,128,causal 32,1024,128 > $O/peers.txt 2>&1
echo "[t=$(( $(date +%s) - t0 ))s] peers done" >> $O/log.txt
# second timing pass, order reversed, to see the spread
for sz in "B=256 T=1024 S=1024 D=128" "B=32 T=1024 S=1024 D=64" "B=32 T=1024 S=1024 D=128"; do
  for n in v1 generated; do d=$n; [ $n = v1 ] && d=build/attnvar/v1
    timeout 30 build/var/v_attention_$n $sz --dir $d --ptx $d/attention.sm_90a.ptx --flush --time-only --reps 50 2>&1 | grep -v '^  ' | sed "s/^/TIME2 $n /"
  done
done >> $O/time.txt
d=build/attnvar/v1
for a in "B=3 T=129 S=251 D=67" "B=134 T=128 S=128 D=128" "B=2 T=300 S=520 D=128"; do
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 build/var/v_attention_v1 $a --dir $d --ptx $d/attention.sm_90a.ptx --once > build/cs.txt 2>&1
    echo "$tool attention $a: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' build/cs.txt | tail -1)" >> $O/log.txt
  done
done
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 build/var/v_attention_lse_v1 T=129 S=251 D=67 --dir $d --ptx $d/attention_lse.sm_90a.ptx --once > build/cs.txt 2>&1
echo "memcheck lse: rc=$? $(grep 'ERROR SUMMARY' build/cs.txt | tail -1)" >> $O/log.txt
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 build/var/v_attention_causal_v1 B=3 T=129 D=67 --dir $d --ptx $d/attention_causal.sm_90a.ptx --once > build/cs.txt 2>&1
echo "memcheck causal: rc=$? $(grep 'ERROR SUMMARY' build/cs.txt | tail -1)" >> $O/log.txt
echo "[t=$(( $(date +%s) - t0 ))s] done" >> $O/log.txt
cat $O/log.txt $O/val_count.txt; grep TIME $O/time.txt; cat $O/peers.txt
