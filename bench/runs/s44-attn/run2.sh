#!/bin/sh
# Issue 22, session 44, call 2 (nvidia-h100-x1): main's generated/ against
# v1 (Q given back after the last S, O from the fragments), v2 (v1 and the
# next tile's Q prefetched into L2 a tile ahead) and v3 (v1 with two stages
# and two Q buffers at D 128): validation on both PTX targets, timings at
# issue 22's sizes twice, SDPA in the same call. Carry build/attnvar lib.
O=${OUT:-build/s44attn2}; mkdir -p $O
t0=$(date +%s)
DIRS="generated build/attnvar/v1 build/attnvar/v2 build/attnvar/v3" OUT=build/s44b sh bench/attn_var.sh > build/s44b.log 2>&1
cp build/s44b/val.txt build/s44b/time.txt $O/
echo "val: $(grep -c PASS $O/val.txt) PASS, $(grep -ci fail $O/val.txt) fail; [t=$(( $(date +%s) - t0 ))s]" > $O/log.txt
python3 bench/attn_peers.py $O/peers.json 32,1024,64 256,1024,128 32,4096,128 32,4096,128,causal 32,1024,128 > $O/peers.txt 2>&1
for sz in "B=256 T=1024 S=1024 D=128" "B=32 T=1024 S=1024 D=128" "B=32 T=4096 S=4096 D=128" "B=32 T=1024 S=1024 D=64"; do
  for n in v3 v2 v1 generated; do d=$n; [ $n = generated ] || d=build/attnvar/$n
    timeout 30 build/var/v_attention_$n $sz --dir $d --ptx $d/attention.sm_90a.ptx --flush --time-only --reps 50 2>&1 | grep -v '^  ' | sed "s/^/TIME2 $n /"
  done
done >> $O/time.txt
python3 - $O/time.txt >> $O/log.txt <<'PY'
import re, sys
for l in open(sys.argv[1]):
    m = re.search(r'^(TIME2?) (\S+) (causal )?.*?(B=\S+)\s.* fused=([0-9.]+)ms', l)
    if m: print(m.group(1), m.group(2), (m.group(3) or '') + m.group(4), m.group(5))
PY
echo "[t=$(( $(date +%s) - t0 ))s] done" >> $O/log.txt
cat $O/log.txt $O/peers.txt
