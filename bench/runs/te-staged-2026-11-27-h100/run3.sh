#!/bin/sh
L=$OUT/log.txt
exec > $L 2>&1
G=build/i28te/gen
S=build/i28te/genS
B=/tmp/i28
mkdir -p $B
T0=$(date +%s)
make -s -j16 lib/libfuserun.a 2>/dev/null || exit 1
for s in transfer_entropy transfer_entropy_shard; do
  sh tests/gpu/build_driver.sh $s $G $B/o_$s -L/usr/local/cuda/lib64/stubs -lcuda 2>/dev/null &
done
sh tests/gpu/build_driver.sh transfer_entropy $S $B/s_transfer_entropy -L/usr/local/cuda/lib64/stubs -lcuda 2>/dev/null &
sh tests/gpu/build_driver.sh transfer_entropy generated $B/m_transfer_entropy -L/usr/local/cuda/lib64/stubs -lcuda 2>/dev/null &
wait
echo "== validate ours (gen)"
for n in 1 2 5 997 8192 16384; do $B/o_transfer_entropy N=$n --dir $G --seed 5 --reps 3 || echo "FAIL N=$n"; done
for sr in independent coupled reverse; do $B/o_transfer_entropy N=8192 --series $sr --dir $G --seed 7 --reps 3 || echo "FAIL series $sr"; done
$B/o_transfer_entropy N=997 --dir $G --seed 5 --reps 2 --misalign || echo "FAIL misalign"
for mn in "M=1 N=1" "M=1 N=2" "M=5 N=5" "M=499 N=997" "M=4096 N=8192"; do $B/o_transfer_entropy_shard $mn --dir $G --seed 5 --reps 3 || echo "FAIL shard $mn"; done
$B/o_transfer_entropy_shard M=4096 N=8192 --series coupled --dir $G --seed 5 --reps 3 || echo "FAIL shard coupled"
$B/m_transfer_entropy N=8192 --seed 5 --reps 3 | sed 's/^/main: /'
$B/s_transfer_entropy N=8192 --dir $S --seed 5 --reps 3 | sed 's/^/staged-only: /'
echo "== sanitizers $(( $(date +%s) - T0 ))s"
compute-sanitizer --tool memcheck --error-exitcode 9 $B/o_transfer_entropy N=997 --dir $G --seed 5 --reps 1 | tail -1
compute-sanitizer --tool memcheck --error-exitcode 9 $B/o_transfer_entropy_shard M=499 N=997 --dir $G --seed 5 --reps 1 | tail -1
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 $B/o_transfer_entropy N=2500 --dir $G --seed 5 --reps 1 | tail -1
echo "== timing (flush) $(( $(date +%s) - T0 ))s"
for n in 8192 16384; do
  for r in 1 2; do
    $B/o_transfer_entropy N=$n --dir $G --seed 5 --flush --time-only --reps 50 | grep fused= | sed "s/^/ours N=$n: /"
    $B/s_transfer_entropy N=$n --dir $S --seed 5 --flush --time-only --reps 50 | grep fused= | sed "s/^/staged-only N=$n: /"
    $B/m_transfer_entropy N=$n --seed 5 --flush --time-only --reps 50 | grep fused= | sed "s/^/main N=$n: /"
  done
done
echo "== ncu $(( $(date +%s) - T0 ))s"
timeout 60 ncu --clock-control none -k regex:transfer_entropy_f0 -c 1 --section SpeedOfLight --section InstructionStats --section WarpStateStats --metrics sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum $B/o_transfer_entropy N=8192 --dir $G --seed 5 --time-only --reps 1 > $OUT/ncu.txt 2>&1
echo "== peers $(( $(date +%s) - T0 ))s"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/peers.py --only 'transfer_entropy[expert]' --no-ceilings --deadline-s 100 --out $OUT/peers.json
echo "== done $(( $(date +%s) - T0 ))s"
