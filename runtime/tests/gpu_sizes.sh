#!/bin/sh
# On a GPU machine: `fuserun validate` on every shipped artifact at awkward
# sizes (1 where the spec allows it, primes, counts that are no multiple of
# a block or a warp), fused and unfused against the float64 reference,
# outputs poisoned first; the medium sizes are runtime/tests/gpu.sh's.
#   sh runtime/tests/gpu_sizes.sh [SPEC...]
# New specs get sizes from their size lines (sizes() below). fuserun is
# $FUSERUN, else bin/fuserun, else build/rt-gpu/fuserun (built with $CC when
# missing). make gpu-check runs it. Prints one line per case and
# "shipped sizes: P passed, F failed"; exits 1 on a failure.
set -u
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
SEED=${SEED:-$$}
FUSERUN=${FUSERUN:-bin/fuserun}
[ -x "$FUSERUN" ] || FUSERUN=build/rt-gpu/fuserun # gpu.sh's, when it built one
if [ ! -x "$FUSERUN" ]; then
	mkdir -p build/rt-gpu
	FUSERUN=build/rt-gpu/fuserun
	$CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iruntime -Iruntime/tool -Igenerated -I"$CUDA_HOME/include" \
		runtime/*.c runtime/tool/*.c -ldl -lpthread -lm -o "$FUSERUN" || { echo "shipped sizes: cannot build fuserun"; exit 2; }
fi
specs=${*:-$(ls generated/*.manifest | sed 's|generated/||; s|\.manifest$||')}
# 1 and awkward sizes for a spec: its size lines set to 1, then to 37,
# 101, 129, ... in order, then to 1031, 1001, 257, ... (1000003 for a
# single size); two specs whose sizes are constrained are named
sizes() {
	case $1 in
	transfer_entropy) echo "N=5 N=37" ;; # K = 4 neighbours need 5 points
	spike_burst) echo "N=1,NP1=2,S=1,F=1 N=1009,NP1=1010,S=10091,F=7" ;;
	*) names=$(sed -n 's/^size \([A-Za-z0-9_]*\)$/\1/p' "generated/$1.manifest")
	   [ -n "$names" ] || { echo "-"; return; }
	   ones= odd= big= i=0
	   set -- $names
	   for n in $names; do
		   v=$(echo "37 101 129 257 61 67 71 73" | cut -d' ' -f$((i % 8 + 1)))
		   w=$(echo "1031 1001 257 61 67 71 73 79" | cut -d' ' -f$((i % 8 + 1)))
		   [ $# = 1 ] && w=1000003
		   ones="$ones${ones:+,}$n=1" odd="$odd${odd:+,}$n=$v" big="$big${big:+,}$n=$w" i=$((i + 1))
	   done
	   echo "$ones $odd $big" ;;
	esac
}
pass=0 fail=0
echo "seed $SEED"
for s in $specs; do
	sz=$(sizes "$s")
	[ "$sz" = - ] && sz=N=1 # no size: the size given is unused
	for z in $sz; do
		out=$($FUSERUN validate "generated/$s.manifest" --size "$z" --seed "$SEED" 2>&1)
		rc=$?
		if [ $rc = 0 ]; then pass=$((pass + 1)) r=PASS; else fail=$((fail + 1)) r="FAIL (exit $rc)"; fi
		echo "$r $s --size $z"
		[ $rc = 0 ] || printf '%s\n' "$out" | sed 's/^/    /'
	done
done
echo "shipped sizes: $pass passed, $fail failed"
[ $fail = 0 ]
