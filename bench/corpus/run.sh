#!/bin/sh
# GPU side of the corpus (bench/corpus/README.md): for each chain, validate
# ours against the float64 reference at every CHECK size and at SIZES[0], time
# fused and unfused at every SIZES entry, then time torch eager and
# torch.compile (harness.py), and make the table (table.py). Everything goes
# under $OUT (default build/corpus). Needs the artifacts made beforehand on a
# machine with fusec (sh bench/corpus/build.sh), a C compiler, libcuda, and
# python3 with torch and triton for the peers.
#   sh bench/corpus/run.sh [NAME...]              (default: every chain)
# Knobs: DEADLINE=S (default 560: the whole run, seconds; what is left when the
# peers start is their budget, and what does not fit is recorded as skipped),
# VJOBS (validations at once, 4), PJOBS (torch.compile warm-up processes, 6),
# NO_EAGER=1 (time torch.compile only), REPS (our timed runs, 50),
# HEADLINE=1 (SIZES[0] of each chain only: a whole comparison in one call),
# BASE=DIR (a baseline's artifacts, e.g. main's, built as build.sh builds:
# each timing of [C] is followed by the baseline's, into base.txt, so that a
# branch and main are compared on the same GPU in the same call).
# Phases: [A] torch.compile warm-up of every chain and size in the background
# (harness.py --precompile: inductor's on-disk caches), while [B] the drivers
# are built and the validations run, VJOBS at once (correctness only); then,
# alone on the GPU, [C] our timings one at a time and [D] the peers' timings.
# A chain that fails anywhere is recorded and the run goes on.
# Files: plan.txt, build.txt, validate.txt (every driver line), validate.tsv
# (chain, what, sizes, PASS/FAIL/ERROR), ours.txt (timing lines), peers.jsonl,
# precompile.log, table.md, ratio.png, log.txt (phases and their times).
cd "$(dirname "$0")/../.." || exit 2
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
GEN=bench/corpus/gen
O=${OUT:-build/corpus}
# the drivers and the per-job files stay out of $OUT: the device tool brings
# back only so many files, and left out table.md for 600 drivers (2026-11-26)
W=${WORK:-build/corpus-work}
B=$W/bin

# one validation (a job of phase B): NAME WHAT SIZE... -> $W/v/NAME.WHAT.txt
if [ "${1:-}" = --validate-one ]; then
	n=$2 what=$3 tag=$4
	shift 4
	extra=
	[ "$what" = misalign ] && extra=--misalign
	f=$W/v/$n.$tag.txt
	if [ ! -x $B/v_$n ]; then
		printf '%s\t%s\t%s\tERROR\n' "$n" "$what" "$*" >$f.tsv
		echo "ERROR $n $what $*: no driver (build.txt)" >$f
		exit 0
	fi
	timeout 120 $B/v_$n "$@" --dir $GEN --seed 7 --reps 3 $extra >$f 2>&1
	rc=$?
	case $rc in 0) st=PASS ;; 1) st=FAIL ;; *) st=ERROR; echo "ERROR $n $what $*: exit $rc" >>$f ;; esac
	printf '%s\t%s\t%s\t%s\n' "$n" "$what" "$*" "$st" >$f.tsv
	exit 0
fi
# one driver build: NAME
if [ "${1:-}" = --build-one ]; then
	n=$2
	sh tests/gpu/build_driver.sh $n $GEN $B/v_$n -L$CUDA_HOME/lib64/stubs -lcuda >$W/v/build.$n.txt 2>&1 ||
		echo "driver of $n does not build" >>$W/v/build.$n.txt
	if [ -n "${BASE:-}" ]; then
		sh tests/gpu/build_driver.sh $n $BASE $B/base_$n -L$CUDA_HOME/lib64/stubs -lcuda >>$W/v/build.$n.txt 2>&1 ||
			echo "baseline driver of $n does not build" >>$W/v/build.$n.txt
	fi
	exit 0
fi

set -u
[ -n "${HEADLINE:-}" ] && export CORPUS_HEADLINE=1
DEADLINE=${DEADLINE:-560}
VJOBS=${VJOBS:-4}
PJOBS=${PJOBS:-6}
REPS=${REPS:-50}
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }
rm -rf $W/v
mkdir -p $O $B $W/v
log() { echo "[$(elapsed)s] $*" | tee -a $O/log.txt; }
: >$O/log.txt
names=${*:-$(ls bench/corpus/*.fuse | sed 's|.*/||; s/\.fuse$//')}
[ -d $GEN ] || { log "no $GEN: run sh bench/corpus/build.sh first (on a machine with fusec) and carry it"; exit 2; }

python3 bench/corpus/harness.py --plan --gen $GEN $names >$O/plan.txt 2>&1
grep ' error ' $O/plan.txt | tee -a $O/log.txt

# [A] warm torch.compile's caches in the background
export TORCHINDUCTOR_FX_GRAPH_CACHE=1
pre_budget=$((DEADLINE * 45 / 100))
log "A: torch.compile warm-up, $PJOBS processes, at most ${pre_budget}s"
TORCHINDUCTOR_COMPILE_THREADS=1 timeout $((pre_budget + 30)) python3 bench/corpus/harness.py --precompile --jobs $PJOBS --budget $pre_budget --gen $GEN $names \
	>$O/precompile.log 2>&1 &
pre=$!

# [B] drivers, then validations
log "B: drivers"
make -s lib/libfuserun.a || log "B: cannot build lib/libfuserun.a: no driver builds" # they link it (tests/gpu/build_driver.sh)
for n in $names; do [ -f $GEN/$n.manifest ] && echo $n || echo "no artifact for $n in $GEN" >>$O/build.txt; done |
	xargs -P 8 -n 1 sh bench/corpus/run.sh --build-one
cat $W/v/build.*.txt >>$O/build.txt 2>/dev/null
grep 'does not build' $O/build.txt | tee -a $O/log.txt
log "B: validations, $VJOBS at once"
awk '$2 == "check" { k[$1]++; printf "%s check c%d", $1, k[$1]; for (i = 3; i <= NF; i++) printf " %s", $i; print "";
                     if (k[$1] == 2) { printf "%s misalign m%d", $1, k[$1]; for (i = 3; i <= NF; i++) printf " %s", $i; print "" } }
     $2 == "time" && !t[$1]++ { printf "%s full s0", $1; for (i = 3; i <= NF; i++) printf " %s", $i; print "" }' $O/plan.txt |
	xargs -P $VJOBS -L 1 sh bench/corpus/run.sh --validate-one
: >$O/validate.txt
: >$O/validate.tsv
for n in $names; do
	for f in $W/v/$n.*.txt; do
		case $f in *.tsv|*/build.*) continue ;; esac
		[ -f "$f" ] || continue
		cat "$f" >>$O/validate.txt
		cat "$f.tsv" >>$O/validate.tsv 2>/dev/null
	done
done
log "B: $(grep -c 'PASS$' $O/validate.tsv) passed, $(grep -c 'FAIL$' $O/validate.tsv) failed, $(grep -c 'ERROR$' $O/validate.tsv) errors"
grep -v 'PASS$' $O/validate.tsv | sed 's/^/  not passed: /' | tee -a $O/log.txt

log "A: waiting for the warm-up"
wait $pre
log "A: warm-up done (exit $?)"

# [C] our timings, alone on the GPU
log "C: ours, --flush --time-only --reps $REPS"
: >$O/ours.txt
awk '$2 == "time"' $O/plan.txt | while read -r n what sz; do
	if [ ! -x $B/v_$n ]; then echo "ERROR $n $sz: no driver" >>$O/ours.txt; continue; fi
	timeout 120 $B/v_$n $sz --dir $GEN --seed 7 --flush --time-only --reps $REPS >>$O/ours.txt 2>&1 ||
		echo "ERROR $n $sz: exit $?" >>$O/ours.txt
	[ -n "${BASE:-}" ] || continue
	timeout 120 $B/base_$n $sz --dir $BASE --seed 7 --flush --time-only --reps $REPS >>$O/base.txt 2>&1 ||
		echo "ERROR $n $sz: exit $?" >>$O/base.txt
done
log "C: $(grep -c 'fused=' $O/ours.txt) timed, $(grep -c '^ERROR' $O/ours.txt) errors"

# [D] the peers, with what time is left
left=$((DEADLINE - $(elapsed) - 10))
[ $left -lt 30 ] && left=30
log "D: torch eager and torch.compile, budget ${left}s"
timeout $((left + 25)) python3 bench/corpus/harness.py --out $O/peers.jsonl --budget $left --gen $GEN \
	${NO_EAGER:+--no-eager} $names >$O/harness.log 2>&1 || log "D: harness exit $?: $(tail -n 3 $O/harness.log)"
log "D: $(grep -c compile_ms $O/peers.jsonl 2>/dev/null) timed, $(grep -c '"error"' $O/peers.jsonl 2>/dev/null) errors or skipped"

python3 bench/corpus/table.py $O >$O/table.md 2>>$O/log.txt || log "table.py failed"
tail -n 4 $O/table.md | tee -a $O/log.txt
log "done"
