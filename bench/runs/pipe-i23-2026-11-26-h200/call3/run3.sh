#!/bin/sh
# call 3 (issue 23): the final tree's artifacts (vF) against main's (v0): tests/gpu/pipeline.c (correctness, timings),
# pipe_bench phase by phase, then compute-sanitizer memcheck, racecheck, synccheck on vF (--quick)
cd build/i23p || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
CU=${CUDA_HOME:-/usr/local/cuda}
mkdir -p obj
for f in src/runtime/*.c; do cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc/runtime -I$CU/include -c $f -o obj/$(basename $f .c).o 2>/dev/null & done; wait
for v in v0 vF; do
  cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc/runtime -I$v -I$CU/include src/tests/pipeline.c $v/belief_update_ref.c $v/spike_burst_ref.c \
     $v/active_inference_step_ref.c obj/*.o -ldl -lpthread -lm -o pl_$v || exit 1
  cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc/runtime -I$v -I$CU/include src/pipe_bench.c obj/*.o -ldl -lpthread -lm -o pb_$v || exit 1
done
for v in vF v0; do timeout 120 ./pl_$v $v > $OUT/pipeline_$v.txt 2>&1; echo "pipeline $v rc $?"; done
for v in v0 vF; do timeout 60 ./pb_$v $v >> $OUT/bench.txt 2>&1; done
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 ./pl_vF vF --quick > $OUT/san_$tool.txt 2>&1; echo "sanitizer $tool rc $? $(tail -1 $OUT/san_$tool.txt)"
done
echo "== summary"; grep -hE "FAIL|^TIME active|^TIME belief|PASS:|FAIL:" $OUT/pipeline_vF.txt | cut -c1-230; echo "-- v0"; grep -hE "FAIL|^TIME active|^TIME belief|PASS:|FAIL:" $OUT/pipeline_v0.txt | cut -c1-230
grep -E "device|8192x8192 (fused|once per_sm=0)|1024x1024 (fused|once per_sm=0)|T=100 (graph|once per_sm=0)|T=4 (graph|once per_sm=0)|8192x8192 once phase" $OUT/bench.txt
grep -c PASS $OUT/san_*.txt
