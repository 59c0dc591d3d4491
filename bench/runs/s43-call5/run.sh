#!/bin/sh
# Session 43, call 5 (H100): after call 4 (the corpus, 265 validations):
#   1. ncu on bcast_mid_bf16 and batchnorm_nchw, the baseline's kernel and
#      ours (both 3-4% slower in call 4 with the power-of-two shifts);
#   2. memcheck on logsumexp at odd widths, misaligned;
#   3. every shipped spec validated (tests/gpu/run.sh validate), the rest of
#      the time.
#   carry bench/corpus/gen build/corpus-base lib bin; 5 files to $OUT
O=${OUT:-build/s43c5}; mkdir -p $O; S=$O/summary.txt; : > $S
say() { printf '%s\n' "$*" | tee -a "$S"; }
t0=$(date +%s)
el() { say "[t=$(( $(date +%s) - t0 ))s] $*"; }
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
say "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(date -u '+%Y-%m-%d %H:%M UTC')"
W=build/s43c5w; mkdir -p $W
for n in bcast_mid_bf16 batchnorm_nchw logsumexp_8192; do
	sh tests/gpu/build_driver.sh $n bench/corpus/gen $W/v_$n -L$CUDA_HOME/lib64/stubs -lcuda > /dev/null 2>&1 &
	sh tests/gpu/build_driver.sh $n build/corpus-base $W/b_$n -L$CUDA_HOME/lib64/stubs -lcuda > /dev/null 2>&1 &
done
wait
M="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats --section SchedulerStats"
for a in "bcast_mid_bf16 B=32 T=2048 C=2048" "batchnorm_nchw N=64 C=256 HW=3136"; do
	set -- $a; n=$1; shift
	for v in b v; do
		d=bench/corpus/gen; [ $v = b ] && d=build/corpus-base
		say "$n $v: $($W/${v}_$n "$@" --dir $d --time-only --flush --reps 30 2>&1 | grep -o ' fused=[^ ]*')"
		timeout 60 ncu $M -k regex:${n}_f0 --launch-skip 2 --launch-count 1 $W/${v}_$n "$@" --dir $d --time-only --reps 3 >> $O/ncu.txt 2>&1
	done
done
grep -E "^  [a-z_]+_f0|Duration|DRAM Throughput|Registers Per|Achieved Occ|Issue Slots Busy|Executed Instructions |Warp Cycles Per Issued|Block Limit Reg" $O/ncu.txt | awk '{$1=$1; print}' >> $S
el ncu
for a in "R=3 C=8191" "R=5 C=4097" "R=2 C=100003"; do
	for m in "" --misalign; do
		compute-sanitizer --tool memcheck --error-exitcode 9 $W/v_logsumexp_8192 $a --dir bench/corpus/gen --reps 1 $m > $W/cs.txt 2>&1
		say "memcheck logsumexp_8192 $a $m: rc=$? $(tail -1 $W/cs.txt)"
	done
done
el memcheck
left=$(( ${TOTAL_S:-380} - ($(date +%s) - t0) ))
JOBS=12 GPU_PHASE=validate timeout $left sh tests/gpu/run.sh > $O/gpu_validate.txt 2>&1
say "shipped specs (rc $?): $(grep -E 'passed|failed' $O/gpu_validate.txt | tail -1)"
grep -E '^FAIL' $O/gpu_validate.txt | head -5 | tee -a $S
el done
