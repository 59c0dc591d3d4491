#!/bin/sh
# Row kernels on a GPU machine, one device call (issue 9): validation of the
# row chains at awkward and wide sizes (rows wider than a block's registers
# hold; the sm_80 PTX too, JIT-compiled for this GPU), then compute-sanitizer,
# then timings beside torch eager and torch.compile (bench/rows.sh), the
# sm_80 PTX at the widest rows, then ncu on the widest rows. softmax from generated/, the
# other chains from bench/chains/gen (made beforehand with bin/fusec
# --arch=sm_80,sm_90,sm_90a: the GPU machine may have no re2c/lemon).
#   WIDTHS="32 ... 65536" CHAINS="softmax rownorm ..." PHASES="validate sanitize time ncu" sh bench/rowwide.sh
# Writes $OUT/rowwide.txt (and rows.txt from bench/rows.sh); ends with
# "rowwide: N passed, M failed" over the validations and sanitizer runs.
set -u
O=${OUT:-build/rowwide}
CHAINS=${CHAINS:-softmax rownorm layernorm crossentropy}
PHASES=${PHASES:-validate sanitize time ncu}
CU=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$O" build/gpu
log=$O/rowwide.txt
: > "$log"
pass=0 fail=0
dir() { if [ -f generated/$1.manifest ]; then echo generated; else echo bench/chains/gen; fi; }
has() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }
check() { # spec args...: one validation, counted
	s=$1; shift
	if out=$(build/gpu/v_$s "$@" --dir $(dir $s) 2>&1); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	echo "$out" | grep -v '^  ' | sed "s|\$| [$*]|" | tee -a "$log"
}
for s in $CHAINS; do
	d=$(dir $s)
	cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$s -I$d -I$CU/include -include $s.h \
		tests/gpu/validate.c $d/${s}_ref.c -L$CU/lib64/stubs -lcuda -lm -o build/gpu/v_$s || { fail=$((fail + 1)); continue; }
done
if has validate; then
	for s in $CHAINS; do
		d=$(dir $s)
		# 1 x 1, odd widths (scalar path), widths a multiple of 4 (vector path),
		# misaligned rows, rows past what a block's registers hold (24576 f32
		# columns on the vector path, 8192 on the scalar one) and far past it
		# (VSIZES, VSIZES80: the sizes, ';' between)
		IFS=';'
		set -- ${VSIZES:-R=1 C=1;R=37 C=1001;R=37 C=1004 --misalign;R=1000 C=3;R=1001 C=64;R=7 C=2052;R=5 C=16385;R=9 C=16388;R=5 C=40000;R=3 C=65536;R=7 C=65536 --misalign;R=3 C=70001;R=2 C=98304;R=3 C=131072;R=2 C=131075 --misalign;R=133 C=32768}
		IFS=' 	
'
		for sz in "$@"; do
			check $s $sz --seed 5 --reps 3
		done
		# the sm_80 PTX on this GPU
		IFS=';'
		set -- ${VSIZES80:-R=3 C=70001;R=5 C=65536;R=3 C=32768 --misalign}
		IFS=' 	
'
		for sz in "$@"; do
			check $s $sz --ptx $d/$s.sm_80.ptx --seed 6 --reps 3
		done
	done
fi
if has sanitize; then
	CS=$(command -v compute-sanitizer || echo $CU/bin/compute-sanitizer)
	for s in $CHAINS; do
		d=$(dir $s)
		# SANITIZE: the runs, separated by ';'
		list=${SANITIZE:-memcheck R=5 C=40000;memcheck R=3 C=70001;memcheck R=2 C=131075 --misalign;memcheck R=37 C=1001;racecheck R=5 C=40000;racecheck R=37 C=1004;synccheck R=5 C=40000;synccheck R=37 C=1004}
		IFS=';'
		set -- $list
		IFS=' 	
'
		for t in "$@"; do
			set -- $t
			tool=$1; shift
			if $CS --tool $tool --error-exitcode 9 build/gpu/v_$s "$@" --dir $d --reps 2 > build/gpu/cs.txt 2>&1; then
				pass=$((pass + 1)); echo "compute-sanitizer $tool $s $*: clean" | tee -a "$log"
			else
				fail=$((fail + 1)); echo "compute-sanitizer $tool $s $*: FAILED" | tee -a "$log"; tail -15 build/gpu/cs.txt | tee -a "$log"
			fi
		done
	done
fi
echo "rowwide: $pass passed, $fail failed" | tee -a "$log"
if has time; then
	OUT=$O CHAINS="$CHAINS" WIDTHS="${WIDTHS:-32 128 1024 8192 16384 32768 65536}" sh bench/rows.sh
	# the sm_80 PTX at the widest rows
	for s in $CHAINS; do
		build/gpu/v_$s R=1024 C=65536 --dir $(dir $s) --ptx $(dir $s)/$s.sm_80.ptx --time-only --reps 50 2>&1 | grep -v '^  ' |
			sed 's/$/ [sm_80 PTX]/' | tee -a "$O/rows.txt"
	done
fi
if has ncu; then
	ncu --kernel-name regex:'_f0$' --launch-skip 2 --launch-count 1 --section SpeedOfLight --section Occupancy \
		--section LaunchStats build/gpu/v_softmax R=1024 C=65536 --time-only --reps 3 > "$O/ncu.txt" 2>&1
	grep -E "Duration|DRAM Throughput|Memory Throughput|Registers|Achieved Occupancy|Cluster|Grid Size|Block Size" "$O/ncu.txt" | tee -a "$log"
fi
