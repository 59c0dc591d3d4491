#!/bin/sh
# call 2 (issue 23): tests/gpu/pipeline.c on the main tree's artifacts (v0) and the change (vN), timings phase by phase
# (pipe_bench: v0, vB512 = 512 threads without U32/elision, vN), ncu of the new one launch, then the sanitizers on vN
cd build/i23p || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
CU=${CUDA_HOME:-/usr/local/cuda}
mkdir -p obj
for f in src/runtime/*.c; do cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc/runtime -I$CU/include -c $f -o obj/$(basename $f .c).o & done; wait
for v in v0 vN; do
  cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc/runtime -I$v -I$CU/include src/tests/pipeline.c $v/belief_update_ref.c $v/spike_burst_ref.c \
     $v/active_inference_step_ref.c obj/*.o -ldl -lpthread -lm -o pl_$v || exit 1
done
for v in v0 vB512 vN; do cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc/runtime -I$v -I$CU/include src/pipe_bench.c obj/*.o -ldl -lpthread -lm -o pb_$v || exit 1; done
for v in vN v0; do timeout 120 ./pl_$v $v > $OUT/pipeline_$v.txt 2>&1; echo "pipeline $v rc $?"; done
for v in v0 vB512 vN; do timeout 60 ./pb_$v $v >> $OUT/bench.txt 2>&1; done
timeout 60 ncu -k regex:active_inference --section SpeedOfLight --section Occupancy --section WarpStateStats \
  --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum ./pb_vN vN --ncu > $OUT/ncu_ai.txt 2>&1; echo "ncu ai rc $?"
timeout 60 ncu -k regex:belief_steps --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
  --metrics regex:smsp__pcsamp_warps_issue_stalled_[a-z_]+$,lts__t_sector_hit_rate.pct,gpu__time_duration.sum ./pb_vN vN --ncu-belief > $OUT/ncu_bu.txt 2>&1; echo "ncu bu rc $?"
for tool in memcheck racecheck synccheck; do
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 9 ./pl_vN vN --quick > san_$tool.txt 2>&1; echo "sanitizer $tool rc $? $(tail -1 san_$tool.txt)" | tee -a $OUT/san.txt
  grep -E "FAIL|ERROR" san_$tool.txt | head -5 >> $OUT/san.txt
done
echo "== summary"; grep -hE "FAIL|^TIME|PASS:|FAIL:" $OUT/pipeline_vN.txt | cut -c1-220; echo "-- v0"; grep -hE "FAIL|^TIME|PASS:|FAIL:" $OUT/pipeline_v0.txt | cut -c1-220
grep -E "device|8192x8192 (fused|once per_sm=0)|1024x1024 (fused|once per_sm=0)|T=100 (graph|once per_sm=0)|T=4 (graph|once per_sm=0)|phase" $OUT/bench.txt
