#!/bin/sh
# Session 39, third H100 call: [1] the corpus's row chains above 1.05x
# torch.compile, built with the tuning table that session 39 measured
# (register caps for rmsnorm_bf16, add_rmsnorm_bf16, logsumexp_8192,
# row_stats_8192), validated and timed against torch.compile in this call;
# [2] issue 24: python/tests/gpu_torch.py (Python's call on torch tensors:
# correctness and overhead against fuserun bench), twice.
# Carry: build/rows-new (those chains of bench/corpus/gen) lib bin. Output: $OUT/summary.txt, $OUT/res.tgz
O=${OUT:-build/c3}; mkdir -p $O; S=$O/summary.txt; : > $S
R=build/c3-res; rm -rf $R; mkdir -p $R
say() { echo "$*" | tee -a $S; }
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) $(date -u +%FT%TZ)"
mkdir -p bench/corpus/gen && cp build/rows-new/gen/* bench/corpus/gen/
make -s lib/libfuserun.a 2>/dev/null; t0=$(date +%s)
OUT=$R/corpus REPS=30 HEADLINE=1 DEADLINE=200 VJOBS=12 PJOBS=8 NO_EAGER=1 sh bench/corpus/run.sh $(cat build/rows-new/names.txt) > $R/corpus.log 2>&1
say "corpus rc $? ($(( $(date +%s) - t0 )) s)"
cat $R/corpus/log.txt >> $S 2>/dev/null
grep -E "^\| |geomean|above" $R/corpus/table.md >> $S 2>/dev/null
export FUSERUN_LIB=$(pwd)/lib/libfuserun.so FUSERUN=$(pwd)/bin/fuserun
for i in 1 2; do
	say "--- gpu_torch.py, round $i ($(( $(date +%s) - t0 )) s)"
	timeout 60 python3 python/tests/gpu_torch.py --chains softmax,kl_divergence,gemv_axpby_sum,add_rmsnorm,attention >> $S 2>&1; say "exit $?"
done
tar czf $O/res.tgz -C $R corpus corpus.log 2>/dev/null
say "done ($(( $(date +%s) - t0 )) s)"
