#!/bin/sh
# Issue 21/22 profile, one H100 call: ncu on our fused kernels of the corpus's
# slowest chains beside torch.compile's Triton kernels of the same chains, and
# on our attention at 32/1024/64 beside SDPA's. Carry bench/corpus/gen.
O=${OUT:-build/prof}; mkdir -p $O; L=$O/prof.txt; : > $L
W=build/prof-work; mkdir -p $W
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
say() { echo "$*" | tee -a $L; }
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
FILT='Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Size|Grid Size|Block Limit|Waves Per SM|Stall|Issue Slots Busy|Executed Ipc Active|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Warp Cycles Per Issued|Avg. Active Threads|Shared Memory Configuration Size|Dynamic Shared|Static Shared'
prof() { n=$1; shift
	[ -x $W/v_$n ] || sh tests/gpu/build_driver.sh $n bench/corpus/gen $W/v_$n -L$CUDA_HOME/lib64/stubs -lcuda > $W/b_$n.txt 2>&1 || { say "$n: driver fails"; return; }
	say "=== ours $n $*"
	timeout 90 ncu -k regex:"${n}_f[0-9]+\$" --launch-skip 2 --launch-count 1 $SEC $W/v_$n "$@" --dir bench/corpus/gen --time-only --reps 3 > $W/n.txt 2>&1
	grep -E "  [a-z_0-9]+_f[0-9]|$FILT" $W/n.txt >> $L
	say "=== compile $n"
	timeout 150 ncu -k regex:triton --launch-skip 1 --launch-count 2 $SEC python3 bench/runs/prof-2026-11-27-h100/peer_ncu.py $n > $W/p.txt 2>&1
	grep -E "  triton_[a-z_0-9]+|$FILT" $W/p.txt >> $L
}
prof rmsnorm_bf16 R=32768 C=4096
prof logsumexp_8192 R=16384 C=8192
prof bcast_mid_bf16 B=32 T=2048 C=2048
prof rotary_bf16 B=16 H=32 T=2048 D=128
prof row_argmax R=4096 C=32000
prof row_sumsq_32 R=4194304 C=32
prof rmsnorm_f32 R=16384 C=4096
say "=== attention 32/1024/64 ours (sm_90a)"
sh tests/gpu/build_driver.sh attention generated $W/v_attention -L$CUDA_HOME/lib64/stubs -lcuda > $W/b_attn.txt 2>&1
timeout 90 ncu -k regex:attention --launch-skip 2 --launch-count 1 $SEC --section SchedulerStats --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active \
	$W/v_attention B=32 T=1024 S=1024 D=64 --ptx generated/attention.sm_90a.ptx --time-only --reps 3 > $W/a.txt 2>&1
grep -E "  attention|$FILT|gmma|pipe_xu|Eligible|Active Warps" $W/a.txt >> $L
tail -3 $W/a.txt >> $L
say "=== attention 32/1024/64 SDPA"
cat > $W/sdpa.py <<'PY'
import torch, torch.nn.functional as F
q, k, v = (torch.randn(1, 32, 1024, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
for _ in range(5): F.scaled_dot_product_attention(q, k, v, scale=0.125)
torch.cuda.synchronize()
PY
timeout 90 ncu --launch-skip 3 --launch-count 1 $SEC --section SchedulerStats --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active \
	python3 $W/sdpa.py > $W/s.txt 2>&1
grep -E "^  [a-zA-Z_]|$FILT|gmma|hmma|pipe_xu|Eligible|Active Warps" $W/s.txt >> $L
tail -3 $W/s.txt >> $L
say done
