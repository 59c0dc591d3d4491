#!/bin/sh
# Session 39, first H100 call: [1] persistent attention under racecheck over
# more tiles than SMs (134 tiles at T=S=128), each variant run once
# (validate --once: the 26 runs of a plain validation ran past 60 s under
# racecheck at stop 38); [2] the corpus's point chains (fz_divm, 0cb6603)
# validated and timed against their pre-divm artifacts (16976fa,
# build/corpus-base/gen) and torch.compile, in this call.
# Carry: bench/corpus/gen build/corpus-base lib. Output: $OUT/summary.txt, $OUT/res.tgz
O=${OUT:-build/c1}; mkdir -p $O; S=$O/summary.txt; : > $S
R=build/c1-res; rm -rf $R; mkdir -p $R
CU=/usr/local/cuda; CS=$CU/bin/compute-sanitizer; L="-L$CU/lib64/stubs -lcuda"; G=generated
say() { echo "$*" | tee -a $S; }
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) $(date -u +%FT%TZ)"
make -s lib/libfuserun.a; t0=$(date +%s)
sh tests/gpu/build_driver.sh attention $G $R/v_attention $L || say "BUILD FAIL attention"
for tc in "racecheck B=134 T=128 S=128 D=64" "racecheck B=134 T=128 S=128 D=128 --scalar scale -0.7" \
	"synccheck B=134 T=128 S=128 D=128 --scalar scale -0.7"; do
	set -- $tc; tool=$1; shift; k=$((${k:-0} + 1))
	t1=$(date +%s)
	timeout 200 $CS --tool $tool --error-exitcode 9 $R/v_attention "$@" --ptx $G/attention.sm_90a.ptx --dir $G --once > $R/cs.txt 2>&1; rc=$?
	say "cs $tool v_attention $* (--once): rc $rc, $(( $(date +%s) - t1 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/cs.txt | head -1) $(grep -o 'PASS\|FAIL' $R/cs.txt | head -1)"
	cp $R/cs.txt $R/cs$k-$tool.txt
done
el=$(( $(date +%s) - t0 )); dl=$(( ${LIMIT:-540} - el ))
say "--- corpus point chains, deadline $dl s (elapsed $el)"
OUT=$R/corpus REPS=30 HEADLINE=1 DEADLINE=$dl VJOBS=12 PJOBS=8 NO_EAGER=1 BASE=build/corpus-base/gen sh bench/corpus/run.sh $(cat build/corpus-base/points.txt) > $R/corpus.log 2>&1
say "corpus rc $?"
cat $R/corpus/log.txt >> $S 2>/dev/null
grep -E "^\| |geomean|above" $R/corpus/table.md >> $S 2>/dev/null
cp $R/corpus/base.txt $R/corpus/ours.txt $O/ 2>/dev/null
tar czf $O/res.tgz -C $R corpus cs1-racecheck.txt cs2-racecheck.txt corpus.log 2>/dev/null
say done
