#!/bin/sh
# The session's last H100 call: [1] persistent attention as merged (cc7de35,
# with the Q-barrier fix made after the helper's run): validations, racecheck,
# synccheck and memcheck over more tiles than SMs, timing at the bar sizes with
# SDPA in the same call; [2] the corpus's point chains (fz_divm) validated and
# timed against their pre-divm artifacts (build/corpus-base/gen) and torch.
# Carry: bench/corpus/gen build/corpus-base lib. Output: $OUT/summary.txt, $OUT/res.tgz
O=${OUT:-build/fin}; mkdir -p $O; S=$O/summary.txt; : > $S
R=build/fin-res; rm -rf $R; mkdir -p $R
CU=/usr/local/cuda; CS=$CU/bin/compute-sanitizer; L="-L$CU/lib64/stubs -lcuda"; G=generated
say() { echo "$*" | tee -a $S; }
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) $(date -u +%FT%TZ)"
make -s lib/libfuserun.a; t0=$(date +%s)
for n in attention attention_causal attention_lse; do sh tests/gpu/build_driver.sh $n $G $R/v_$n $L || say "BUILD FAIL $n"; done
: > $R/cmds
for sz in "B=1 T=1 S=1 D=64" "B=3 T=129 S=251 D=67" "B=2 T=200 S=77 D=200" "B=150 T=130 S=256 D=128" "B=140 T=200 S=256 D=64 --scalar scale -0.7" \
	"B=3 T=129 S=251 D=67 --misalign" "B=134 T=128 S=128 D=128 --scalar scale -0.7"; do echo "v_attention $sz --ptx $G/attention.sm_90a.ptx" >> $R/cmds; done
for sz in "B=3 T=129 S=251 D=67" "B=150 T=130 S=256 D=128"; do echo "v_attention $sz --ptx $G/attention.sm_90.ptx" >> $R/cmds; done
for sz in "B=3 T=129 D=67" "B=20 T=1031 D=64" "B=2 T=1031 D=64 --scalar scale -0.7"; do echo "v_attention_causal $sz --ptx $G/attention_causal.sm_90a.ptx" >> $R/cmds; done
for sz in "T=129 S=251 D=67" "T=20000 S=300 D=64"; do echo "v_attention_lse $sz --ptx $G/attention_lse.sm_90a.ptx" >> $R/cmds; done
i=0; while read -r c; do i=$((i+1)); echo "$R/$c --seed 7 --dir $G > $R/o$i.txt 2>&1; echo \$? > $R/o$i.rc" > $R/q$i.sh; echo "$c" > $R/o$i.cmd; done < $R/cmds
ls $R/q*.sh | xargs -P 12 -n 1 timeout 150 sh
pass=0 fail=0 j=0
while [ $j -lt $i ]; do j=$((j+1)); if [ "$(cat $R/o$j.rc 2>/dev/null)" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); say "FAILED: $(cat $R/o$j.cmd) $(grep -v '^  ' $R/o$j.txt | tail -1)"; fi; done
say "attention validation: $pass passed, $fail failed ($(( $(date +%s) - t0 )) s)"
for tc in "racecheck v_attention B=134 T=128 S=128 D=64 --ptx $G/attention.sm_90a.ptx" \
	"racecheck v_attention B=134 T=128 S=128 D=128 --ptx $G/attention.sm_90a.ptx --scalar scale -0.7" \
	"synccheck v_attention B=134 T=128 S=128 D=64 --ptx $G/attention.sm_90a.ptx" \
	"memcheck v_attention B=134 T=128 S=128 D=128 --ptx $G/attention.sm_90a.ptx --scalar scale -0.7" \
	"racecheck v_attention_causal B=3 T=300 D=64 --ptx $G/attention_causal.sm_90a.ptx"; do
	set -- $tc; tool=$1; b=$2; shift 2
	timeout 60 $CS --tool $tool --error-exitcode 9 $R/$b "$@" --dir $G --reps 1 > $R/cs.txt 2>&1; rc=$?
	say "cs $tool $b $*: rc $rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/cs.txt | head -1)"
done
say "--- attention timing (median of 50, L2 flushed), ms; then SDPA"
for sz in "B=32 T=1024 S=1024 D=64" "B=256 T=1024 S=1024 D=128" "B=32 T=4096 S=4096 D=128" "B=32 T=1024 S=1024 D=128"; do
	say "$sz: $($R/v_attention $sz --dir $G --ptx $G/attention.sm_90a.ptx --flush --time-only --reps 50 2>&1 | grep -o ' fused=[0-9.]*ms')"
done
say "causal B=32 T=4096 D=128: $($R/v_attention_causal B=32 T=4096 D=128 --dir $G --ptx $G/attention_causal.sm_90a.ptx --flush --time-only --reps 50 2>&1 | grep -o ' fused=[0-9.]*ms')"
PYTHONUNBUFFERED=1 timeout 90 python3 bench/runs/final-2026-11-27-h100/sdpa.py 32,1024,64 256,1024,128 32,4096,128 32,4096,128,causal 32,1024,128 >> $S 2>&1
el=$(( $(date +%s) - t0 )); dl=$(( ${LIMIT:-455} - el ))
say "--- corpus point chains, deadline $dl s (elapsed $el)"
OUT=$R/corpus REPS=30 HEADLINE=1 DEADLINE=$dl VJOBS=12 PJOBS=8 NO_EAGER=1 BASE=build/corpus-base/gen sh bench/corpus/run.sh $(cat build/corpus-base/points.txt) > $R/corpus.log 2>&1
say "corpus rc $?"
cat $R/corpus/log.txt >> $S 2>/dev/null
grep -E "^\| |geomean|above" $R/corpus/table.md >> $S 2>/dev/null
cp $R/corpus/base.txt $R/corpus/ours.txt $O/ 2>/dev/null
tar czf $O/res.tgz -C $R corpus o1.txt 2>/dev/null
say done
