#!/bin/sh
# On a GPU machine: each newcomer chain validated as a user would validate
# their own spec, with `fuserun validate DIR/NAME.manifest --size ...` (no
# rebuild: fuserun compiles the artifact's header and float64 reference),
# fused and unfused against the reference on fresh random inputs drawn from
# the declared domains, outputs poisoned, at three sizes each: 1 (or the
# smallest the chain takes), an awkward one (primes, odd column counts) and
# a large one. With `memcheck` as the first argument, one awkward size of
# each chain also runs under compute-sanitizer memcheck.
#   sh examples/newcomers/validate.sh [memcheck] [DIR]
# The artifacts come from DIR (default build/newcomers; made with bin/fusec
# when missing); fuserun is $FUSERUN, else bin/fuserun, else built with $CC
# into DIR. Prints one line per case and "newcomers: P passed, F failed";
# exits 1 on a failure.
set -u
MEMCHECK=0
[ "${1:-}" = memcheck ] && MEMCHECK=1 && shift
DIR=${1:-build/newcomers}
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
SEED=${SEED:-$$}
mkdir -p "$DIR"
pass=0 fail=0
FUSERUN=${FUSERUN:-bin/fuserun}
if [ ! -x "$FUSERUN" ]; then
	FUSERUN=$DIR/fuserun
	$CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iruntime -Iruntime/tool -Igenerated -I"$CUDA_HOME/include" \
		runtime/*.c runtime/tool/*.c -ldl -lpthread -lm -o "$FUSERUN" || { echo "newcomers: cannot build fuserun"; exit 2; }
fi
sizes() {
	case $1 in
	layernorm|row_stats|logsumexp) echo "R=1,C=1 R=37,C=1001 R=4096,C=4096" ;;
	pair_sum) echo "R=1,C=1 R=37,C=1001 R=4096,C=8192" ;;
	gelu_residual|adam) echo "N=1 N=1000003 N=16777216" ;;
	rotary) echo "R=1,H=1 R=37,H=501 R=4096,H=2048" ;;
	esac
}
echo "seed $SEED; $($FUSERUN --version 2>&1 | head -1)"
for f in examples/newcomers/*.fuse; do
	s=$(basename "$f" .fuse)
	if [ ! -f "$DIR/$s.manifest" ] && ! bin/fusec -o "$DIR" "$f"; then
		echo "FAIL $s: fusec"
		fail=$((fail + 1))
		continue
	fi
	for sz in $(sizes $s); do
		out=$($FUSERUN validate "$DIR/$s.manifest" --size $sz --seed $SEED 2>&1)
		rc=$?
		if [ $rc = 0 ]; then pass=$((pass + 1)) r=PASS; else fail=$((fail + 1)) r="FAIL (exit $rc)"; fi
		echo "$r fuserun validate $DIR/$s.manifest --size $sz --seed $SEED"
		printf '%s\n' "$out" | sed 's/^/    /'
	done
	if [ $MEMCHECK = 1 ]; then
		sz=$(sizes $s | cut -d' ' -f2)
		out=$(compute-sanitizer --tool memcheck --error-exitcode 9 $FUSERUN validate "$DIR/$s.manifest" --size $sz --seed $SEED 2>&1)
		rc=$?
		if [ $rc = 0 ]; then pass=$((pass + 1)) r=PASS; else fail=$((fail + 1)) r="FAIL (exit $rc)"; fi
		echo "$r compute-sanitizer memcheck: $s --size $sz"
		printf '%s\n' "$out" | grep -e "ERROR SUMMARY" -e "MISMATCH" | sed 's/^/    /'
	fi
done
echo "newcomers: $pass passed, $fail failed"
[ $fail = 0 ]
