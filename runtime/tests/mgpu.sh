#!/bin/sh
# The group runtime's CPU tests (no GPU, no NCCL needed): test_group against
# a fake libcuda with several devices and a fake libnccl, sanitized. Run from
# the repository root after make check-runtime's prerequisites are built.
# Prints one line per check that fails (all with -v) and
# "mgpu: P passed, F failed"; exits 1 on failures.
B=${RT_BUILD:-build/rt}
FUSERUN=${FUSERUN:-$B/fuserun-san}
T=$B/tmp-mgpu
VERBOSE=0
[ "$1" = -v ] && VERBOSE=1
pass=0 fail=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
unset FUSERUN_LIBCUDA FUSERUN_NCCL FAKECUDA_CC FAKECUDA_FAIL FAKECUDA_FAIL_AT FAKECUDA_DEVICES FAKECUDA_STUB \
	FAKENCCL_FAIL FAKENCCL_FAIL_AT FAKENCCL_LOST_AT FAKENCCL_VERSION

. "$(dirname "$0")/lib.sh" # ok, bad, expect, tally

rm -rf "$T" && mkdir -p "$T"
tally $B/test_group generated "$(pwd)/$B/libfakecuda.so" "$(pwd)/$B/libfakenccl.so" "$(pwd)/$B/libnocuda.so" "$T"

# the real libnccl, where the toolkit has one: it loads and has every entry point
# (no GPU needed: only dlopen and ncclGetVersion)
real=$(ls /usr/local/cuda/lib64/libnccl.so.2 /usr/lib/x86_64-linux-gnu/libnccl.so.2 2>/dev/null | head -1)
if [ -n "$real" ]; then
	out=$(FUSERUN_NCCL=$real FUSERUN_LIBCUDA=$(pwd)/$B/libfakecuda.so FAKECUDA_DEVICES=0 $B/test_group --load-nccl 2>&1)
	printf '%s' "$out" | grep -q "NCCL 2\." && ok "the toolkit's libnccl loads with every entry point" || bad "the toolkit's libnccl ($real) loads" "$out"
	# and makes a unique id on the CPU (fz_nccl_unique_id: its bootstrap root's address)
	out=$(FUSERUN_NCCL=$real timeout 30 $B/test_join generated id 2>&1)
	printf '%s\n' "$out" | grep -q "^[0-9a-f]\{256\}\$" && ok "the toolkit's libnccl makes a unique id of 256 hex digits" ||
		bad "the toolkit's libnccl makes a unique id ($real)" "$out"
fi

# the examples and the bench script: no driver, one fake device, two, no NCCL
F="FUSERUN_LIBCUDA=$(pwd)/$B/libfakecuda.so"
N="FUSERUN_NCCL=$(pwd)/$B/libfakenccl.so"
for ex in te_mgpu spiking_mgpu; do
	expect "$ex without a driver says so" 2 "no GPU to run on" -- env FUSERUN_LIBCUDA=/nonexistent bin/$ex generated 64
	expect "$ex with no device says so" 2 "no GPU to run on" -- env $F FAKECUDA_DEVICES=0 bin/$ex generated 64
done
# (the fake runs no kernel: the outputs are whatever memory held, so results may differ: exit 0 or 1)
expect "te_mgpu on one GPU skips the 2-device run, saying so" "0 1" "2 devices asked, this machine has 1: skipped" -- \
	env $F bin/te_mgpu generated 64 1,2 2
expect "te_mgpu on one GPU runs the 1-device count" "0 1" "result te N=64 devices=1 " -- env $F bin/te_mgpu generated 64 1,2 2
expect "te_mgpu on two GPUs runs both counts through the group" "0 1" "result te N=67 devices=2 .*identical_to_1=" -- \
	env $F $N FAKECUDA_DEVICES=2 bin/te_mgpu generated 67 1,2 2
expect "te_mgpu on two GPUs without NCCL says so" 1 "cannot load the NCCL library /nonexistent" -- \
	env $F FUSERUN_NCCL=/nonexistent FAKECUDA_DEVICES=2 bin/te_mgpu generated 64 2 2
expect "te_mgpu: a failing collective is reported" 1 "NCCL error" -- \
	env $F $N FAKECUDA_DEVICES=2 FAKENCCL_FAIL=ncclCommGetAsyncError bin/te_mgpu generated 64 2 2
# spiking_mgpu's exchange stays on the devices (fz_exchange): every buffer is
# zeroed or filled, so on the fake (no kernel runs: no spike, the potentials
# stay as they were put) the runs agree bit for bit, and a digest compares
# what came back through the exchange and the gathers
expect "spiking_mgpu runs its steps on two GPUs through the exchange, identical to one" 0 \
	"result spiking N=2000 steps=4 devices=2 .*capacity=1000 exchange=fixed urgent=no .*identical_to_1=yes" -- env $F $N FAKECUDA_DEVICES=2 bin/spiking_mgpu generated 2000 4 1,2
# lag and the exchange at top priority are chosen, not the default (not yet measured on GPUs)
LAG="SPIKING_MGPU_EXCHANGE=lag SPIKING_MGPU_URGENT=1"
syncs() { env $F $N FAKECUDA_DEVICES=2 FAKECUDA_COUNT=cuStreamSynchronize,cuStreamQuery bin/spiking_mgpu generated 2000 "$1" 2 2>&1 | grep '^fakecuda:' | tr '\n' ' '; }
s2=$(syncs 2) s10=$(syncs 10)
[ -n "$s2" ] && [ "$s2" = "$s10" ] && ok "spiking_mgpu: no host synchronisation inside the step loop (as many syncs for 10 steps as for 2)" ||
	bad "spiking_mgpu: no host synchronisation inside the step loop" "2 steps: $s2; 10 steps: $s10"
# the capacity a step (issue 26b): lag sizes step t from step t-2's counts (read from page-locked
# memory, waiting for that step's exchange only); on the fake every count is 0, so steps 2 on go
# at the floor of 256 items: 4 steps at 1000, 1000, 256, 256 average 628
expect "spiking_mgpu lag: steps 2 on sized from the counts of two steps before (mean capacity 628 of 1000)" 0 \
	"devices=2 .*capacity=1000 exchange=lag urgent=yes mean_capacity=628 redos=0 identical_to_1=yes" -- env $F $N FAKECUDA_DEVICES=2 $LAG bin/spiking_mgpu generated 2000 4 1,2
expect "spiking_mgpu fixed: every step at the full capacity (commit 418fa9a's exchange)" 0 \
	"devices=2 .*capacity=1000 exchange=fixed urgent=yes mean_capacity=1000 redos=0 identical_to_1=yes" -- \
	env $F $N FAKECUDA_DEVICES=2 SPIKING_MGPU_EXCHANGE=fixed SPIKING_MGPU_URGENT=1 bin/spiking_mgpu generated 2000 4 1,2
expect "spiking_mgpu sync: the counts first, the lists at the largest count (1: nothing fires on the fake)" 0 \
	"devices=2 .*exchange=sync urgent=yes mean_capacity=1 redos=0 identical_to_1=yes" -- \
	env $F $N FAKECUDA_DEVICES=2 SPIKING_MGPU_EXCHANGE=sync SPIKING_MGPU_URGENT=1 bin/spiking_mgpu generated 2000 4 1,2
expect "spiking_mgpu: a bad SPIKING_MGPU_EXCHANGE is refused" 1 "SPIKING_MGPU_EXCHANGE=host: lag, fixed or sync" -- \
	env $F $N FAKECUDA_DEVICES=2 SPIKING_MGPU_EXCHANGE=host bin/spiking_mgpu generated 2000 4 2
# the overflow's path (a step's lists cut): drained, the step sent again, the step after it run
# again; taken on every device count (1 and 2) and the results still identical
expect "spiking_mgpu lag: an overflow redone (step 3 of 6), results identical to one device's" 0 \
	"devices=2 .*exchange=lag urgent=yes mean_capacity=[0-9]* redos=1 identical_to_1=yes" -- \
	env $F $N FAKECUDA_DEVICES=2 $LAG SPIKING_MGPU_FORCE_REDO=3 bin/spiking_mgpu generated 2000 6 1,2
expect "spiking_mgpu lag: an overflow of the last step redone" 0 "devices=2 .*redos=1 identical_to_1=yes" -- \
	env $F $N FAKECUDA_DEVICES=2 $LAG SPIKING_MGPU_FORCE_REDO=5 bin/spiking_mgpu generated 2000 6 1,2
# where the host waits in lag and sync: one counts event a step (cuEventQuery, ready at once on
# the fake), never a stream: 10 steps make 8 more event queries than 2 and as many stream syncs
evq() { env $F $N FAKECUDA_DEVICES=2 FAKECUDA_COUNT=cuStreamSynchronize,cuStreamQuery,cuCtxSynchronize,cuEventQuery \
	SPIKING_MGPU_EXCHANGE=$1 bin/spiking_mgpu generated 2000 "$2" 2 2>&1 | grep '^fakecuda:'; }
for mode in lag sync; do
	e2=$(evq $mode 2) e10=$(evq $mode 10)
	q2=$(printf '%s\n' "$e2" | sed -n 's/.*cuEventQuery called \([0-9]*\) times/\1/p')
	q10=$(printf '%s\n' "$e10" | sed -n 's/.*cuEventQuery called \([0-9]*\) times/\1/p')
	if [ -n "$q2" ] && [ -n "$q10" ] && [ $((q10 - q2)) = 8 ] &&
		[ "$(printf '%s\n' "$e2" | grep -v cuEventQuery)" = "$(printf '%s\n' "$e10" | grep -v cuEventQuery)" ]; then
		ok "spiking_mgpu $mode: the host waits for one step's counts event a step, never for a stream"
	else
		bad "spiking_mgpu $mode: the host waits for one step's counts event a step, never for a stream" "2 steps: $e2; 10 steps: $e10"
	fi
done
expect "spiking_mgpu: SPIKING_MGPU_CAP sets the exchange's capacity" 0 "devices=2 .*capacity=64 exchange=lag .*identical_to_1=yes" -- \
	env $F $N FAKECUDA_DEVICES=2 $LAG SPIKING_MGPU_CAP=64 bin/spiking_mgpu generated 2000 2 1,2
expect "spiking_mgpu: a failing exchange is reported, naming the rank and step" 1 "rank 0: ncclAllGather (exchange, step 0)" -- \
	env $F $N FAKECUDA_DEVICES=2 FAKENCCL_FAIL=ncclAllGather bin/spiking_mgpu generated 2000 2 2
expect "spiking_mgpu on one GPU skips the 2-device run" "0 1" "2 devices asked, this machine has 1: skipped" -- \
	env $F bin/spiking_mgpu generated 2000 3 2
# fuserun bench --devices
expect "fuserun bench --devices 2 shards over the kernels' outermost size" "0 1" "kl_divergence sharded over N" -- \
	env $F $N FAKECUDA_DEVICES=2 $FUSERUN bench kl_divergence --size N=1001 --devices 2 --reps 3
expect "fuserun bench --devices --json" "0 1" '"sharded_over": "M", "devices": 2' -- \
	env $F $N FAKECUDA_DEVICES=2 $FUSERUN bench gemv_axpby_sum --size M=101,N=30 --devices 2 --reps 3 --json
expect "fuserun bench --devices refuses a scatter, saying why" 2 "spike_burst_f0 (scatter) ranges over data-dependent points" -- \
	env $F $N FAKECUDA_DEVICES=2 $FUSERUN bench spike_burst --size N=1009,NP1=1010,S=10090,F=10 --devices 2
expect "fuserun bench --devices refuses a pairwise [N,N] fusion" 2 "cannot be sharded over N" -- \
	env $F $N FAKECUDA_DEVICES=2 $FUSERUN bench transfer_entropy --size N=100 --devices 2
# sizes a gather's domain does not fit (0..99 into N = 4) are refused before any
# input is drawn or any device launched on (the manifest's fits line, issue 27)
if [ -x bin/fusec ]; then
	printf 'fusion gather_dom(g: i32[M] in [0, 99], x: f32[N]) -> (y: f32[M]) {\n    stage s { y(i) = x(g(i)) }\n}\n' > $T/gather_dom.fuse
	if bin/fusec -o $T/gd $T/gather_dom.fuse >$T/fusec.log 2>&1; then
		expect "fuserun bench --devices refuses sizes a gather's domain does not fit" 2 \
			"input g's domain 0..99 subscripts a dimension N, which must be at least 100: N is 4 at these sizes" -- \
			env $F $N FAKECUDA_DEVICES=2 FAKECUDA_FAIL=cuLaunchKernel TMPDIR=$T $FUSERUN bench $T/gd/gather_dom.manifest --size M=100,N=4 --devices 2 --reps 3
		expect "fuserun bench --devices runs a gather whose domain fits" 0 "bench gather_dom sharded over M" -- \
			env $F $N FAKECUDA_DEVICES=2 TMPDIR=$T $FUSERUN bench $T/gd/gather_dom.manifest --size M=100,N=100 --devices 2 --reps 3
	else
		bad "fusec compiles a gather with a domain" "$(cat $T/fusec.log)"
	fi
fi
expect "fuserun bench --devices without NCCL" 2 "cannot load the NCCL library /nonexistent" -- \
	env $F FUSERUN_NCCL=/nonexistent FAKECUDA_DEVICES=2 $FUSERUN bench kl_divergence --size N=1000 --devices 2 --reps 3
expect "fuserun bench --devices 3 on two devices" 2 "3 devices from 0" -- \
	env $F $N FAKECUDA_DEVICES=2 $FUSERUN bench kl_divergence --size N=1000 --devices 3 --reps 3
expect "fuserun bench --devices 0 is a usage error" 2 "devices '0' is not a number from 1" -- $FUSERUN bench kl_divergence --size N=10 --devices 0
expect "fuserun validate takes no --devices" 2 "fuserun: validate takes no --devices" -- $FUSERUN validate kl_divergence --size N=10 --devices 2
expect "bench/mgpu.sh without a GPU exits cleanly, saying so" 2 "no GPU to run on: nothing measured" -- \
	env FUSERUN_LIBCUDA=/nonexistent OUT=$T/bench sh bench/mgpu.sh
# on two fake devices (no kernel runs: results differ, exit 1) the table has
# the one-kernel estimator first and each sharded row's speed-up against the
# best one-GPU time
M="env $F $N FAKECUDA_DEVICES=2 TE_SIZES=64 TE_REPS=2 SPIKE_N=2000 SPIKE_STEPS=3 OUT=$T/bench2 TMPDIR=$(pwd)/$T"
expect "bench/mgpu.sh: the one-kernel estimator first in its table" "0 1" \
	"^| what |[^|]*|.*|---[-|]* | transfer entropy (one kernel) | 64 | 1 | [0-9.]* (kernel [0-9.]*) |" -- sh -c "$M sh bench/mgpu.sh >/dev/null 2>&1; tr '\n' ' ' < $T/bench2/mgpu.md"
expect "bench/mgpu.sh: the sharded rows' speed-up against the best one-GPU time" 0 \
	"| transfer entropy (sharded) | 64 | 2 | [0-9.]* (kernels [0-9.]*) | [0-9.]* | [0-9.]* | - |" -- cat $T/bench2/mgpu.md
expect "bench/mgpu.sh: transfer entropy one process per GPU through the launcher" 0 \
	"| transfer entropy (sharded, one process per GPU) | 64 | 2 | [0-9.]* (kernels [0-9.]*) | [0-9.]* | [0-9.]* | - |" -- cat $T/bench2/mgpu.md
expect "bench/mgpu.sh: the spiking network one process per GPU, identical to one GPU" 0 \
	"| spiking step, one process per GPU | 2000 | 2 | [0-9.]* (exchange [0-9.]* on its stream, [0-9.]* waited for) | [0-9.]* | - | [0-9.]* | yes |" -- cat $T/bench2/mgpu.md
# one process per GPU: fuserun-launch, fz_group_join, the bounded waits
. "$(dirname "$0")/join.sh"
rm -rf "$T"
echo "mgpu: $pass passed, $fail failed"
[ $fail = 0 ]
