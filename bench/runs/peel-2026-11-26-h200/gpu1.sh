#!/bin/sh
# Call 1 (issue 21, wt21): ours before the change (gen-base) timed alone on
# the GPU, then bench/corpus/run.sh (validation at the CHECK sizes and
# misaligned, ours after the change, torch eager and torch.compile) for CH.
cd "$(dirname "$0")" || exit 2
CH=${CH:-"log_softmax odd_cols_scale softmax_wide logsumexp_8192 cross_entropy row_argmax layernorm_affine rmsnorm_bf16"}
W=/tmp/w1
rm -rf $W; mkdir -p $W/bin
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $W/gpu.txt 2>&1
python3 -c 'import torch; print(torch.__version__)' >> $W/gpu.txt 2>&1
python3 bench/corpus/harness.py --plan --gen bench/corpus/gen-base $CH > $W/plan_base.txt 2>&1
for n in $CH; do
	cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$n -Ibench/corpus/gen-base -I$CUDA_HOME/include -include $n.h \
		tests/gpu/validate.c bench/corpus/gen-base/${n}_ref.c -L$CUDA_HOME/lib64/stubs -lcuda -lm -o $W/bin/vb_$n &
done
wait
awk '$2 == "time"' $W/plan_base.txt | while read -r n what sz; do
	timeout 30 $W/bin/vb_$n $sz --dir bench/corpus/gen-base --seed 7 --flush --time-only --reps 50 >> $W/ours_base.txt 2>&1 ||
		echo "ERROR $n $sz: exit $?" >> $W/ours_base.txt
done
echo "base timings done at $(($(date +%s) - start))s" >> $W/gpu.txt
OUT=$W/run DEADLINE=${DL:-190} sh bench/corpus/run.sh $CH > $W/run.log 2>&1
echo "run.sh done at $(($(date +%s) - start))s" >> $W/gpu.txt
cp $W/run/table.md $W/ours_base.txt $W/gpu.txt $OUT/ 2>/dev/null
tar czf $OUT/w1.tgz -C $W --exclude=bin .
