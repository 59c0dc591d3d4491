#!/bin/sh
# Session 39, second H100 call (issue 21 rows): [1] the corpus's row chains
# above 1.05x torch.compile, with the f16/bf16 register cache held packed
# (two elements a register), validated and timed against the same chains
# built before the change (build/rows-head/gen) and torch.compile; [2] the
# tuner's register-cap candidates on those chains (build/tune, built with
# TUNE_SPILLS=1: timed even where the cap spills in some path); [3] the
# shipped add_rmsnorm (its PTX changed) validated at awkward sizes.
# Carry: build/rows-new (the chains of bench/corpus/gen) build/rows-head build/tune lib. Output: $OUT/summary.txt, $OUT/times.jsonl, $OUT/res.tgz
O=${OUT:-build/c2}; mkdir -p $O; S=$O/summary.txt; : > $S
R=build/c2-res; rm -rf $R; mkdir -p $R
CU=/usr/local/cuda; L="-L$CU/lib64/stubs -lcuda"; G=generated
say() { echo "$*" | tee -a $S; }
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) $(date -u +%FT%TZ)"
mkdir -p bench/corpus/gen && cp build/rows-new/gen/* bench/corpus/gen/
make -s lib/libfuserun.a 2>/dev/null; t0=$(date +%s)
sh tests/gpu/build_driver.sh add_rmsnorm $G $R/v_add_rmsnorm $L || say "BUILD FAIL add_rmsnorm"
for sz in "R=1 C=1" "R=7 C=13" "R=33 C=4099" "R=5 C=24577" "R=1000 C=4096 --misalign" "R=3 C=70001"; do
	timeout 60 $R/v_add_rmsnorm $sz --dir $G --seed 3 --reps 2 > $R/ar.txt 2>&1; say "add_rmsnorm $sz: rc $? $(grep -o 'PASS\|FAIL' $R/ar.txt | head -1)"
done
say "--- corpus rows (elapsed $(( $(date +%s) - t0 )) s)"
OUT=$R/corpus REPS=30 HEADLINE=1 DEADLINE=250 VJOBS=12 PJOBS=8 NO_EAGER=1 BASE=build/rows-head/gen sh bench/corpus/run.sh $(cat build/rows-head/names.txt) > $R/corpus.log 2>&1
say "corpus rc $?"
cat $R/corpus/log.txt >> $S 2>/dev/null
grep -E "^\| |geomean|above" $R/corpus/table.md >> $S 2>/dev/null
cp $R/corpus/base.txt $R/corpus/ours.txt $O/ 2>/dev/null
say "--- tune run (elapsed $(( $(date +%s) - t0 )) s)"
timeout $(( ${LIMIT:-560} - ($(date +%s) - t0) )) python3 bench/tune.py run --reps 30 > $R/tune.log 2>&1
say "tune rc $?"
cp build/tune/times.jsonl $O/ 2>/dev/null
tar czf $O/res.tgz -C $R corpus corpus.log tune.log 2>/dev/null
say "done ($(( $(date +%s) - t0 )) s)"
