#!/bin/sh
# Multi-GPU figures (issue 14), for a machine with two GPUs (nvidia-h200-x2):
# transfer entropy sharded by point at N = 2^16 and 2^17 and the spiking
# network sharded by neuron range at 2^22 neurons, each on 1 and 2 GPUs in
# the same process, results compared bit for bit with the 1-GPU run; the
# one-kernel transfer entropy as a cross-check. Needs only a C compiler,
# the CUDA headers and the committed generated/ (no fusec, NVRTC, re2c).
#   sh bench/mgpu.sh            (about a minute; the lead's budget is 5)
# DEVICES=1,2,4 picks the device counts; PROCS=1 (the default) also runs
# transfer entropy and the spiking network one process per GPU for each
# count above 1, through runtime/tool/fuserun-launch.sh (issue 26; PROCS=0
# skips it).
# Writes $OUT/mgpu.md (a table), $OUT/mgpu.txt (the raw output) when $OUT is
# set, else build/mgpu/. Exit 0: measured and every result identical;
# 1: a failure or a difference; 2: no GPU or no NCCL (said plainly).
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0): see .library KINDS.md.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=build/mgpu
R=${OUT:-$B}
TE_SIZES=${TE_SIZES:-"65536 131072"}
TE_REPS=${TE_REPS:-20}
SPIKE_N=${SPIKE_N:-4194304}
SPIKE_STEPS=${SPIKE_STEPS:-100}
DEVICES=${DEVICES:-1,2}
PROCS=${PROCS:-1}
mkdir -p $B "$R" || exit 1
log=$R/mgpu.txt
table=$R/mgpu.md
: > "$log"
say() { printf '%s\n' "$*" | tee -a "$log"; }

LIB=$(ls runtime/*.c)   # libfuserun is every C file of runtime/ (not its tool/ or tests/)
for ex in te_mgpu spiking_mgpu; do
	if ! $CC -O2 -g -std=c11 -D_POSIX_C_SOURCE=200809L -Iruntime -I"$CUDA_HOME/include" -Igenerated $LIB examples/$ex.c \
		-ldl -lpthread -lm -o $B/$ex 2>>"$log"; then
		say "mgpu: cannot build $ex (see $log)"
		exit 1
	fi
done

# libnccl: $FUSERUN_NCCL, else the loader's, the toolkit's, or the one in Python's nvidia-nccl package
if [ -z "${FUSERUN_NCCL:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 '; then
	for f in "$CUDA_HOME/lib64/libnccl.so.2" \
		$(python3 -c 'import nvidia, os; [print(os.path.join(p, d, "lib", "libnccl.so.2")) for p in nvidia.__path__ for d in os.listdir(p)]' 2>/dev/null); do
		[ -f "$f" ] && { export FUSERUN_NCCL=$f; break; }
	done
fi
say "# mgpu bench, $(date -u '+%Y-%m-%d %H:%M UTC')"
say "NCCL: ${FUSERUN_NCCL:-libnccl.so.2 from the loader's path}; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
command -v nvidia-smi >/dev/null 2>&1 && { nvidia-smi -L 2>&1 | tee -a "$log"; nvidia-smi topo -m 2>&1 | tee -a "$log"; }

status=0
for n in $TE_SIZES; do
	timeout 120 $B/te_mgpu generated "$n" "$DEVICES" "$TE_REPS" > $B/step.txt 2>&1
	rc=$?
	cat $B/step.txt | tee -a "$log"
	if [ $rc = 2 ]; then say "mgpu: no GPU to run on: nothing measured"; exit 2; fi
	[ $rc = 0 ] || status=1
done
# one process per GPU: rank 0's lines; its one-device and one-kernel lines
# repeat the in-process ones and are kept out of the table ("(procs) ")
if [ "$PROCS" = 1 ]; then
	for d in $(echo "$DEVICES" | tr ',' ' '); do
		[ "$d" -gt 1 ] || continue
		for n in $TE_SIZES; do
			timeout 180 sh runtime/tool/fuserun-launch.sh -n "$d" --grace 20 $B/te_mgpu generated "$n" procs "$TE_REPS" > $B/step.txt 2>&1
			rc=$?
			sed '/^result .* procs=yes /!s/^result /(procs) result /' $B/step.txt | tee -a "$log"
			[ $rc = 0 ] || status=1
		done
	done
fi
timeout 240 $B/spiking_mgpu generated "$SPIKE_N" "$SPIKE_STEPS" "$DEVICES" > $B/step.txt 2>&1
rc=$?
cat $B/step.txt | tee -a "$log"
[ $rc = 0 ] || status=1
# the spiking network one process per GPU (rank 0 compares with its own
# one-device run, whose line is kept out of the table as above)
if [ "$PROCS" = 1 ]; then
	for d in $(echo "$DEVICES" | tr ',' ' '); do
		[ "$d" -gt 1 ] || continue
		timeout 240 sh runtime/tool/fuserun-launch.sh -n "$d" --grace 20 $B/spiking_mgpu generated "$SPIKE_N" "$SPIKE_STEPS" procs > $B/step.txt 2>&1
		rc=$?
		sed '/^result .* procs=yes /!s/^result /(procs) result /' $B/step.txt | tee -a "$log"
		[ $rc = 0 ] || status=1
	done
fi
grep -q 'cannot load the NCCL library' "$log" && status=2

# the table: one row per result line. Transfer entropy: the one-kernel
# estimator and the sharded one on 1 GPU, then the sharded one on 2; times are
# launch to te on the host (the kernels alone in brackets); "vs best 1 GPU"
# divides the best one-GPU time of the two by this row's.
{
	echo "| what | N | devices | time (ms, median) | speed-up vs 1 | vs best 1 GPU | exchange share | identical to 1 GPU | estimate |"
	echo "|---|---|---|---|---|---|---|---|---|"
	grep '^result ' "$log" | while read -r _ what rest; do
		v() { printf '%s\n' "$rest" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }
		case $what in
		te) echo "| transfer entropy (sharded$([ "$(v procs)" = yes ] && echo ', one process per GPU')) | $(v N) | $(v devices) | $(v ms) (kernels $(v kernel_ms)) | $(v speedup) | $(v speedup_vs_best_1gpu) | - | $(v identical_to_1) | te = $(v te) |" ;;
		te_one_kernel) echo "| transfer entropy (one kernel) | $(v N) | 1 | $(v ms) (kernel $(v kernel_ms)) | - | - | - | - (rel. diff. $(grep "^result te N=$(v N) " "$log" | head -1 | tr ' ' '\n' | sed -n 's/^vs_one_kernel=//p')) | te = $(v te) |" ;;
		spiking) echo "| spiking step$([ "$(v procs)" = yes ] && echo ', one process per GPU') | $(v N) | $(v devices) | $(v step_ms) (exchange $(v exchange_ms) on its stream, $(v exposed_ms) waited for) | $(v speedup) | - | $(v exchange_share) | $(v identical_to_1) | $(v spikes) spikes in $(v steps) steps, capacity $(v capacity), digest $(v digest) |" ;;
		esac
	done
} > "$table"
cat "$table"
[ $status = 0 ] && say "mgpu: ok" || say "mgpu: FAILED (status $status)"
exit $status
