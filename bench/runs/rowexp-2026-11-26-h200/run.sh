#!/bin/sh
cd "$(dirname "$0")/../.." || exit 2
CU=${CUDA_HOME:-/usr/local/cuda}; export PATH=$CU/bin:$PATH
E=build/rowexp; B=$E/bin; mkdir -p $B $OUT
CH=${CH:-"logsumexp_8192 row_stats_8192 cross_entropy row_argmax rmsnorm_bf16 add_rmsnorm_bf16 softmax_bf16 layernorm_affine rmsnorm_f32 softmax_wide row_meanvar_1024 log_softmax softmax_scaled_masked"}
VARS=${VARS:-"base r2m2 r1m2 r4 r3m2"}
NCU=${NCU:-"logsumexp_8192 cross_entropy add_rmsnorm_bf16"}
sz() { python3 -c "
import importlib.util,sys
s=importlib.util.spec_from_file_location('m','bench/corpus/$1.py');m=importlib.util.module_from_spec(s);s.loader.exec_module(m)
L=m.$2
for d in (L if '$3'=='all' else L[:1]): print(' '.join('%s=%d'%kv for kv in d.items()))"; }
for r in $VARS; do for n in $CH; do
  cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$n -I$E/g$r -I$CU/include -include $n.h tests/gpu/validate.c $E/g$r/${n}_ref.c -L$CU/lib64/stubs -lcuda -lm -o $B/v_${n}_$r 2>>$OUT/build.txt &
done; done; wait
: > $E/jobs
for n in $CH; do sz $n CHECK all > $E/sz_$n; sz $n SIZES all > $E/big_$n; done
for r in $VARS; do for n in $CH; do while read s; do echo "$B/v_${n}_$r $s --dir $E/g$r --seed 3 --reps 2 | grep -v '^  ' | sed 's/^/$r /'" >> $E/jobs; done < $E/sz_$n; done; done
xargs -P 6 -I{} sh -c '{}' < $E/jobs > $OUT/val.txt 2>&1
echo "validate: $(grep -c PASS $OUT/val.txt) pass of $(wc -l < $E/jobs)"; grep -v PASS $OUT/val.txt | head -20
: > $OUT/time.txt
for n in $CH; do while read s; do for r in $VARS; do
  $B/v_${n}_$r $s --dir $E/g$r --flush --time-only --reps 50 2>&1 | grep -o 'fused=[0-9.]*ms' | sed "s/^/$n $r $s /" >> $OUT/time.txt
done; done < $E/big_$n; done
cat $OUT/time.txt
for n in $NCU; do s=$(head -1 $E/big_$n)
  timeout 120 ncu --kernel-name regex:${n}_f0 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats $B/v_${n}_base $s --dir $E/gbase --time-only --reps 1 > $OUT/ncu_ours_$n.txt 2>&1
done
cd $OUT && tar czf ncu.tgz ncu_*.txt && rm ncu_*.txt; ls
