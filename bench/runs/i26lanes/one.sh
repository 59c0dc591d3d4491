#!/bin/sh
# Issue 26 on one GPU (no x4 lent): the ragged scatter's lanes a row
# (branch i26lanes) against a warp a row (build/i26l/gen0, prepare.sh), at
# the 100-synapse rows of spike_burst (one GPU must not slow: fz_w stays 32)
# and at 25- and 12-synapse rows (a rank's quarter or eighth of a row on 4 or
# 8 GPUs: where fewer lanes should pay). Validation and memcheck of gen1.
#   carry build/i26l; writes $OUT/one.txt; under 150 s
O=${OUT:-build/i26l/out}; B=build/i26l; S=$O/one.txt
mkdir -p "$O" $B/gen1 || exit 1
: > "$S"
say() { printf '%s\n' "$*" | tee -a "$S"; }
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
say "# i26lanes one GPU, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
make -s -j16 lib/libfuserun.a >/dev/null 2>&1 || { say "no libfuserun"; exit 1; }
cp generated/spike_burst.* generated/spike_burst_ref.c $B/gen1/
for g in gen0 gen1; do
	sh tests/gpu/build_driver.sh spike_burst $B/$g $B/v_$g -L$CUDA_HOME/lib64/stubs -lcuda &
done
wait
for syn in 100 25 12; do
	sz="N=1048576 NP1=1048577 S=$((1048576 * syn)) F=10485"
	say "== $syn synapses a row: $sz"
	for g in gen0 gen1 gen0 gen1; do say "$g: $(timeout 30 $B/v_$g $sz --dir $B/$g --seed 5 --flush --time-only --reps 100 2>&1 | tail -1)"; done
done
say "== validate gen1"
for sz in "N=1 NP1=2 S=1 F=1" "N=1009 NP1=1010 S=10090 F=10" "N=1009 NP1=1010 S=25225 F=500" "N=4099 NP1=4100 S=4099 F=4099" \
	"N=100003 NP1=100004 S=1200036 F=5000" "N=1048576 NP1=1048577 S=26214400 F=10485"; do
	say "$sz: $(timeout 30 $B/v_gen1 $sz --dir $B/gen1 --seed 5 --reps 3 2>&1 | tail -1)"
	say "  misaligned: $(timeout 30 $B/v_gen1 $sz --dir $B/gen1 --seed 6 --reps 2 --misalign 2>&1 | tail -1)"
done
compute-sanitizer --tool memcheck --error-exitcode 9 $B/v_gen1 N=1009 NP1=1010 S=2522 F=500 --dir $B/gen1 --reps 2 > $O/cs.txt 2>&1
say "memcheck (2.5 a row) rc=$? $(tail -1 $O/cs.txt)"
say done
