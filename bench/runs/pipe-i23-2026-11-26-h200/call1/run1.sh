#!/bin/sh
# call 1 (issue 23): timings of fusec's variants phase by phase, then ncu of the one launch and the fused kernels at 8192^2
cd build/i23p || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
CU=${CUDA_HOME:-/usr/local/cuda}
mkdir -p obj
for f in src/runtime/*.c; do cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc/runtime -I$CU/include -c $f -o obj/$(basename $f .c).o & done; wait
for v in v0 vB1024 vB512 vM4 vU16; do
  cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc/runtime -I$v -I$CU/include src/pipe_bench.c obj/*.o -ldl -lpthread -lm -o pb_$v || exit 1
done
for v in v0 vB1024 vB512 vM4 vU16 v0; do timeout 100 ./pb_$v $v 2>&1 | tee -a $OUT/times.txt; done
$CU/bin/ptxas -arch=sm_90a v0/active_inference_step.sm_90a.ptx -o aio.cubin && cuobjdump -sass -fun active_inference_once aio.cubin > $OUT/aio_once.sass 2>&1
cuobjdump -sass -fun active_inference_step_f1 aio.cubin > $OUT/aio_f1.sass 2>&1
timeout 200 ncu -k regex:active_inference --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
  --section WarpStateStats --section SchedulerStats --section SourceCounters \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,sm__cycles_active.avg,gpu__time_duration.sum \
  ./pb_v0 v0 --ncu > $OUT/ncu.txt 2>&1; echo "ncu rc $?"
grep -E "^  [a-z_]+|Duration|DRAM Through|Memory Through|dram__bytes|Registers Per|Achieved Occ|Theoretical Occ|Block Limit|Grid Size|Stall|hit_rate|Warp Cycles Per Issued|Eligible|One or More" $OUT/ncu.txt | head -120
