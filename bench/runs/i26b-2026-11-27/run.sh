#!/bin/sh
# Issue 26 (b): the spiking step's exchanges side by side on 4 GPUs, one
# call. Builds examples/spiking_mgpu with cc alone (runtime/*.c, the
# committed generated/), then 2^22 neurons, 100 steps, DEVICES 1,4 with
#   SPIKING_MGPU_EXCHANGE=fixed SPIKING_MGPU_URGENT=0  (commit 418fa9a as merged)
#   SPIKING_MGPU_EXCHANGE=fixed SPIKING_MGPU_URGENT=1  (the same, exchange stream at top priority)
#   SPIKING_MGPU_EXCHANGE=lag SPIKING_MGPU_URGENT=1    (sizes from step t-2's counts, urgent)
#   SPIKING_MGPU_EXCHANGE=sync                         (counts first, the host waits: exact sizes)
# and lag one process per GPU (runtime/tool/fuserun-launch.sh -n 4). Every
# line's digest must be one (bit-identical to one GPU); prints the bars:
# 4 GPUs >= 3.6x one GPU, one process per GPU within 5% of one process.
# Writes $OUT/summary.txt only. Bounded: each run under timeout, the whole
# under 300 s (a run is skipped when less than its bound is left).
#   run from the repository root: sh bench/runs/i26b-2026-11-27/run.sh
#   carry: none (builds from the tracked sources)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
O=${OUT:-build/i26b}
B=build/i26b-run
N=${SPIKE_N:-4194304} STEPS=${SPIKE_STEPS:-100}
mkdir -p "$O" "$B" || exit 1
S=$O/summary.txt
: > "$S"
say() { printf '%s\n' "$*" | tee -a "$S"; }
t0=$(date +%s)
left() { echo $(( 290 - ($(date +%s) - t0) )); }
say "# issue 26b spiking exchanges, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>&1 | tee -a "$S"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ -z "${FUSERUN_NCCL:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 '; then
	for f in "$CUDA_HOME/lib64/libnccl.so.2" \
		$(python3 -c 'import nvidia, os; [print(os.path.join(p, d, "lib", "libnccl.so.2")) for p in nvidia.__path__ for d in os.listdir(p)]' 2>/dev/null); do
		[ -f "$f" ] && { export FUSERUN_NCCL=$f; break; }
	done
fi
say "NCCL: ${FUSERUN_NCCL:-the loader's libnccl.so.2}"
cc -O2 -g -std=c11 -D_POSIX_C_SOURCE=200809L -Iruntime -I"$CUDA_HOME/include" -Igenerated runtime/*.c examples/spiking_mgpu.c \
	-ldl -lpthread -lm -o $B/spiking_mgpu 2>> "$S" || { say "cannot build spiking_mgpu"; exit 1; }
run() { # name, env..., then the device list
	name=$1; shift
	[ "$(left)" -gt 75 ] || { say "SKIP $name: $(left) s left"; return; }
	env "$@" > $B/$name.txt 2>&1
	say "$name: exit $? after $(( $(date +%s) - t0 )) s"
	grep '^result' $B/$name.txt | sed "s/^/$name /" >> "$S"
	grep -i 'error\|FAIL' $B/$name.txt | head -3 >> "$S"
}
run fixed0 SPIKING_MGPU_EXCHANGE=fixed SPIKING_MGPU_URGENT=0 timeout 70 $B/spiking_mgpu generated $N $STEPS 1,4
run fixed SPIKING_MGPU_EXCHANGE=fixed SPIKING_MGPU_URGENT=1 timeout 70 $B/spiking_mgpu generated $N $STEPS 1,4
run lag SPIKING_MGPU_EXCHANGE=lag SPIKING_MGPU_URGENT=1 timeout 70 $B/spiking_mgpu generated $N $STEPS 1,4
run sync SPIKING_MGPU_EXCHANGE=sync SPIKING_MGPU_URGENT=1 timeout 70 $B/spiking_mgpu generated $N $STEPS 1,4
run lagprocs SPIKING_MGPU_EXCHANGE=lag SPIKING_MGPU_URGENT=1 timeout 70 sh runtime/tool/fuserun-launch.sh -n 4 --grace 10 $B/spiking_mgpu generated $N $STEPS procs

say ""
say "## checks and bars"
v() { tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }
d=$(grep 'result spiking' "$S" | tr ' ' '\n' | sed -n 's/^digest=//p' | sort -u)
[ "$(printf '%s\n' "$d" | grep -c .)" = 1 ] && say "PASS one digest over $(grep -c 'result spiking' "$S") lines: $d" || say "FAIL digests: $(echo $d)"
grep 'result spiking' "$S" | grep -q 'identical_to_1=NO' && say "FAIL a line says identical_to_1=NO" || say "PASS identical_to_1=yes everywhere"
for m in fixed0 fixed lag sync; do
	l=$(grep "^$m result spiking .* devices=4 " "$S" | head -1)
	say "$m 4 GPUs: $(echo "$l" | v speedup)x (bar 3.6), $(echo "$l" | v step_ms) ms a step, exchange $(echo "$l" | v exchange_ms) ms on its stream, waited $(echo "$l" | v exposed_ms), mean capacity $(echo "$l" | v mean_capacity) of $(echo "$l" | v capacity), redos $(echo "$l" | v redos), spikes $(echo "$l" | v spikes)"
done
a=$(grep "^lag result spiking .* devices=4 " "$S" | head -1 | v step_ms); b=$(grep "^lagprocs result spiking .* devices=4 procs=yes" "$S" | head -1 | v step_ms)
say "lag one process per GPU: $b ms a step against $a in one process: $(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0 && b > 0) printf "%s, %.1f%%", (b <= 1.05 * a ? "within 5%" : "NOT within 5%"), 100 * (b - a) / a; else print "?" }')"
say "done in $(( $(date +%s) - t0 )) s"
