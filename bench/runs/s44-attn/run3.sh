#!/bin/sh
# Issue 22, session 44, call 3 (nvidia-h100-x1): generated/ as committed
# (two stages and two Q buffers at D 128, Q given back after the last S, O
# from the fragments): the attention specs validated (both PTX targets),
# timed with SDPA and torch.compile in the same call, then memcheck and
# racecheck over more tiles than SMs. Carry lib.
O=${OUT:-build/s44attn3}; mkdir -p $O
t0=$(date +%s)
OUT=$O sh bench/attn.sh validate time peers > $O/attn.txt 2>&1
echo "[t=$(( $(date +%s) - t0 ))s] attn.sh done" >> $O/log.txt
B=build/gpu
for a in "B=134 T=128 S=128 D=128" "B=140 T=200 S=256 D=64" "B=3 T=129 S=251 D=67"; do
  for tool in memcheck racecheck synccheck; do
    timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/v_attention $a --ptx generated/attention.sm_90a.ptx --once > build/cs.txt 2>&1
    echo "$tool attention $a: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' build/cs.txt | tail -1)" >> $O/log.txt
  done
done
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/v_attention_causal B=12 T=1500 D=128 --ptx generated/attention_causal.sm_90a.ptx --once > build/cs.txt 2>&1
  echo "$tool causal B=12 T=1500 D=128: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' build/cs.txt | tail -1)" >> $O/log.txt
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/v_attention_lse T=300 S=520 D=128 --ptx generated/attention_lse.sm_90a.ptx --once > build/cs.txt 2>&1
  echo "$tool lse T=300 S=520 D=128: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' build/cs.txt | tail -1)" >> $O/log.txt
done
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $B/v_attention B=3 T=129 S=251 D=128 --misalign --ptx generated/attention.sm_90a.ptx --once > build/cs.txt 2>&1
echo "memcheck misaligned B=3 T=129 S=251 D=128: rc=$? $(grep -E 'ERROR SUMMARY' build/cs.txt | tail -1)" >> $O/log.txt
echo "[t=$(( $(date +%s) - t0 ))s] done" >> $O/log.txt
cat $O/log.txt; grep -E "passed|failed|PASS|FAIL" $O/validate.txt | grep -v "^  " | tail -8; cat $O/ours.txt | grep sm_90a | sed 's/unfused_err.*fused=/ fused=/; s/unfused=.*//'; cat $O/peers.txt 2>/dev/null | tail -5
