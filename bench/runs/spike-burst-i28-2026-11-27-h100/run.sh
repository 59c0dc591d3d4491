#!/bin/bash
# issue 28 spiking burst: main (gen0) vs candidates, H100. Output: $OUT/res.txt
B=build/i28spk; N=$OUT/ncu.txt; T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 ))s]"; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
make -s -j16 lib/libfuserun.a >/dev/null 2>&1 || { echo "no libfuserun"; exit 1; }
pids=
for g in gen0 genA4 genA6 genAB; do sh tests/gpu/build_driver.sh spike_burst $B/$g /tmp/v_$g -L/usr/local/cuda/lib64/stubs -lcuda & pids="$pids $!"; done
sh tests/gpu/build_driver.sh spike_burst_shard $B/gshard /tmp/v_shard -L/usr/local/cuda/lib64/stubs -lcuda & pids="$pids $!"
wait $pids; el
BIG="N=1048576 NP1=1048577 S=104857600 F=10485"
echo "== timing (flush), H100"
for g in gen0 genAB genA4 genA6 gen0 genAB; do echo -n "$g: "; /tmp/v_$g $BIG --dir $B/$g --seed 5 --flush --time-only --reps 100; done; el
echo "== validate genAB"
for sz in "N=1 NP1=2 S=1 F=1" "N=1009 NP1=1010 S=10090 F=10" "$BIG"; do /tmp/v_genAB $sz --dir $B/genAB --seed 5 --reps 3; done
/tmp/v_genAB N=1009 NP1=1010 S=10090 F=10 --dir $B/genAB --seed 7 --reps 3 --misalign
for sz in "N=1 NP1=3 S=1 F=1" "N=1009 NP1=2019 S=10090 F=20" "N=524288 NP1=1048577 S=52428800 F=10485"; do /tmp/v_shard $sz --dir $B/gshard --seed 5 --reps 3; done
el
echo "== sanitizer"
for t in memcheck racecheck; do compute-sanitizer --tool $t --error-exitcode 9 /tmp/v_genAB N=1009 NP1=1010 S=10090 F=10 --dir $B/genAB --reps 2 > /tmp/cs.txt 2>&1; echo "$t genAB rc=$?"; tail -2 /tmp/cs.txt; done
compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/v_shard N=1009 NP1=2019 S=10090 F=20 --dir $B/gshard --reps 2 > /tmp/cs.txt 2>&1; echo "memcheck shard rc=$?"; tail -1 /tmp/cs.txt
el
echo "== ncu (cold caches per kernel, clock-control none)"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,lts__average_t_sector_hit_rate_realtime.pct
for g in gen0 genAB; do echo "-- $g" >> $N; timeout 40 ncu --clock-control none --metrics $M -k regex:spike_burst_f --launch-skip 4 --launch-count 2 /tmp/v_$g $BIG --dir $B/$g --seed 5 --time-only --reps 1 >> $N 2>&1; done
el
echo "== peers (expert, 2^20)"
PYTHONUNBUFFERED=1 timeout $(( 148 - ($(date +%s) - T0) )) python3 $B/peer.py 2>&1 | grep -E "ms|timer|failed"
el; echo done
