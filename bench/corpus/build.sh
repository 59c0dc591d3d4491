#!/bin/sh
# CPU side of the corpus: fusec's artifacts of every chain (or the NAMEs given)
# into bench/corpus/gen/, for every target, so that a GPU machine without
# re2c, lemon or NVRTC can validate and time them (bench/corpus/run.sh).
#   sh bench/corpus/build.sh [NAME...]
# Exits 1 if a chain failed to build (the others are built all the same).
cd "$(dirname "$0")/../.." || exit 2
FUSEC=${FUSEC:-bin/fusec}
GEN=bench/corpus/gen
[ -x "$FUSEC" ] || make bin/fusec >/dev/null || exit 2
names=${*:-$(ls bench/corpus/*.fuse | sed 's|.*/||; s/\.fuse$//')}
mkdir -p $GEN
ok=0 bad=0
for n in $names; do
	if "$FUSEC" -o $GEN --arch=sm_80,sm_90,sm_90a --tune=tune/table.txt bench/corpus/$n.fuse; then ok=$((ok + 1))
	else bad=$((bad + 1)); echo "build.sh: $n failed" >&2; fi
done
echo "corpus build: $ok built, $bad failed, in $GEN"
[ $bad = 0 ]
