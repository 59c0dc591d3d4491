#!/bin/sh
# The split of an outer-axis reduction over blocks (fz_split in the header)
# and the unroll of its loop, swept on a GPU: VARS holds one artifact folder
# per unroll (u4: as generated, u16: fusec built with red_unroll 16 for split
# kernels); each split formula is the header's fz_split with its first
# statement replaced. Prints the fused variant's median (L2 flushed) per
# case; every case is also validated against the float64 reference.
#   VARS=splitvar sh bench/proto/split_sweep.sh
set -u
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
VARS=${VARS:-splitvar}
T=${TMPDIR:-/tmp}/split_sweep
rm -rf "$T"; mkdir -p "$T"
formula() {
	case $1 in
	A) echo 'unsigned long long s = (2ull * (unsigned long long)(sm > 0 ? sm : 1) + tiles - 1) / tiles;' ;;
	B) echo 'unsigned long long s = tiles >= (unsigned long long)sm ? 1 : (unsigned long long)sm / tiles;' ;;
	C) echo 'unsigned long long s = tiles >= (unsigned long long)sm ? 1 : 2ull * (unsigned long long)sm / tiles;' ;;
	E) echo 'unsigned long long s = tiles >= (unsigned long long)sm ? 1 : 4ull * (unsigned long long)sm / tiles;' ;;
	D) echo 'unsigned long long s = 1;' ;;
	esac
}
for u in $(ls "$VARS"); do
	for f in A B C E D; do
		d=$T/$u$f
		mkdir -p "$d"
		cp "$VARS/$u"/* "$d"/
		for s in colstats belief_update; do
			sed -i "s|^\tunsigned long long s = (2ull \* (unsigned long long)(sm > 0 ? sm : 1) + tiles - 1) / tiles;|\t$(formula $f)|" "$d/$s.h"
			grep -qF "$(formula $f)" "$d/$s.h" || { echo "sed failed for $f"; exit 1; }
			$CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$s -I"$d" -I$CUDA_HOME/include -include $s.h \
				tests/gpu/validate.c "$d/${s}_ref.c" -L$CUDA_HOME/lib64/stubs -lcuda -lm -o "$d/v_$s" || exit 1
		done
	done
done
for sz in "colstats N=65536 C=1024" "colstats N=1048576 C=64" "colstats N=262144 C=256" "colstats N=8192 C=8192" \
	"colstats N=16384 C=4000" "belief_update M=8192 N=8192" "belief_update M=65536 N=1024" "belief_update M=2048 N=2048"; do
	set -- $sz
	s=$1; shift
	for u in $(ls "$VARS"); do
		line="$s $* $u:"
		for f in A B C E D; do
			d=$T/$u$f
			r=$("$d/v_$s" "$@" --dir "$d" --flush 2>&1 | grep -v '^  ')
			ms=$(echo "$r" | sed -n 's/.* fused=\([0-9.]*\)ms.*/\1/p')
			ok=$(echo "$r" | grep -q PASS && echo "" || echo "!")
			line="$line $f=${ms:-?}$ok"
		done
		echo "$line"
	done
done
