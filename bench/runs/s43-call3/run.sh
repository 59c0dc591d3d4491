#!/bin/sh
# Session 43, call 3 (H100): ncu --set full on ours and torch.compile's
# kernel for the chains furthest from compile on the H200 corpus run
# (rotary_bf16, logsumexp_8192, add_rmsnorm_bf16), inductor's code for them;
# then the i26lanes one-GPU timings (fused= lines).
#   carry bench/corpus/gen lib bin build/i26l; under 560 s
O=${OUT:-build/s43c3}; mkdir -p $O; S=$O/summary.txt; : > $S
say() { printf '%s\n' "$*" | tee -a "$S"; }
t0=$(date +%s)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
say "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | head -1)"
W=build/s43c3w; mkdir -p $W
for n in rotary_bf16 logsumexp_8192 add_rmsnorm_bf16; do
	sh tests/gpu/build_driver.sh $n bench/corpus/gen $W/v_$n -L$CUDA_HOME/lib64/stubs -lcuda > $W/b_$n.txt 2>&1 &
done
wait
sz() { python3 -c "import sys; sys.path.insert(0,'bench/corpus'); import $1 as m; print(' '.join(f'{k}={v}' for k,v in m.SIZES[0].items()))"; }
for n in rotary_bf16 logsumexp_8192 add_rmsnorm_bf16; do
	[ $(( $(date +%s) - t0 )) -lt 400 ] || { say "skipped $n: time"; continue; }
	s=$(sz $n)
	say "== $n $s"
	say "ours: $($W/v_$n $s --dir bench/corpus/gen --time-only --flush --reps 30 2>&1 | grep -o 'fused=[^ ]*')"
	timeout 90 ncu --set full -k regex:${n}_f0 --launch-skip 2 --launch-count 1 $W/v_$n $s --dir bench/corpus/gen --time-only --reps 3 > $O/ncu_ours_$n.txt 2>&1
	TORCH_LOGS=output_code timeout 120 python3 bench/runs/s43-call3/peer_ncu.py $n 3 > $O/inductor_$n.txt 2>&1
	timeout 120 ncu --set full -k regex:triton --launch-skip 1 --launch-count 1 python3 bench/runs/s43-call3/peer_ncu.py $n 3 > $O/ncu_peer_$n.txt 2>&1
	for f in ours peer; do
		say "$f: $(grep -E '^ +(Duration|Memory Throughput|DRAM Throughput|Registers Per Thread|Block Size|Grid Size|Achieved Occupancy|Theoretical Occupancy|Executed Instructions) ' $O/ncu_${f}_$n.txt | awk '{$1=$1; print}' | tr '\n' ';')"
	done
done
say "== i26lanes, one GPU (fused= of gen0 and gen1 alternately)"
B=build/i26l
mkdir -p $B/gen1; [ -f $B/gen1/spike_burst.manifest ] || cp generated/spike_burst.* generated/spike_burst_ref.c $B/gen1/
for g in gen0 gen1; do sh tests/gpu/build_driver.sh spike_burst $B/$g $B/v_$g -L$CUDA_HOME/lib64/stubs -lcuda >/dev/null 2>&1; done
for syn in 100 25 12; do
	sz="N=1048576 NP1=1048577 S=$((1048576 * syn)) F=10485"
	for g in gen0 gen1 gen0 gen1; do say "$syn syn $g: $(timeout 30 $B/v_$g $sz --dir $B/$g --seed 5 --flush --time-only --reps 100 2>&1 | grep -o 'fused=[^ ]* unfused=[^ ]*')"; done
done
say "[t=$(( $(date +%s) - t0 ))s] done"
