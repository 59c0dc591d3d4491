#!/bin/sh
# Issue 21, prepared in session 44 and NOT YET RUN (nvidia-h100-x1): why
# torch.compile's kernel for bcast_mid_bf16 (Y = X + P(t,c) + E(b,c), bf16,
# 32/2048/2048) takes 0.1927 ms and ours 0.2140 (session 44). Session 43's
# ncu had ours at 89% of L2 throughput and 83% of DRAM; P reused across
# batches in a thread was slower (bench/runs/s44-bcast). Here: ncu --set full
# on both, inductor's code, and the memory tables side by side. Needs
# bench/corpus/gen built (sh bench/corpus/build.sh bcast_mid_bf16) and lib;
# carry bench/corpus/gen lib bin.
O=${OUT:-build/nextbc}; mkdir -p $O build/var
n=bcast_mid_bf16 s="B=32 T=2048 C=2048"
sh tests/gpu/build_driver.sh $n bench/corpus/gen build/var/v_$n -L/usr/local/cuda/lib64/stubs -lcuda
timeout 120 ncu --set full -k regex:${n}_f0 --launch-skip 2 --launch-count 1 build/var/v_$n $s --dir bench/corpus/gen --time-only --reps 3 > $O/ncu_ours.txt 2>&1
TORCH_LOGS=output_code timeout 120 python3 bench/runs/s43-call3/peer_ncu.py $n 3 > $O/inductor.txt 2>&1
timeout 150 ncu --set full -k regex:triton --launch-skip 1 --launch-count 1 python3 bench/runs/s43-call3/peer_ncu.py $n 3 > $O/ncu_peer.txt 2>&1
for f in ours peer; do
  echo "$f: $(grep -E '^ +(Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Hit Rate|L2 Hit Rate|Registers Per Thread|Block Size|Grid Size|Achieved Occupancy|Executed Instructions|Mem Busy|Max Bandwidth) ' $O/ncu_$f.txt | awk '{$1=$1; print}' | tr '\n' ';')"
done | tee $O/summary.txt
