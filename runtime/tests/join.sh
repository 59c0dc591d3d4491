# One process per GPU on CPU (sourced by runtime/tests/mgpu.sh, whose B, T,
# F, N, FUSERUN and tally it uses): processes started by fuserun-launch,
# each one rank of a job, joined through the fake NCCL's files (the unique
# id written by rank 0 to the launcher's id file, or given in the
# environment). Every run is under `timeout`: a hang is a failure (124).
L=bin/fuserun-launch
J="timeout 60 env $F $N FAKECUDA_DEVICES=3 TMPDIR=$(pwd)/$T"
TJ=$B/test_join
mkdir -p $T/join
expect "two processes join and run: collectives, combine, a sharded fusion gathered, the exchange, in both" 0 \
	"rank 1: 11 passed, 0 failed" -- sh -c "$J $L -n 2 $TJ generated run | grep -q 'rank 0: 11 passed, 0 failed' && $J $L -n 2 $TJ generated run"
expect "three processes join and run" 0 "rank 2: 11 passed, 0 failed" -- $J $L -n 3 $TJ generated run
expect "a process killed mid-run: its peer ends with an error naming it" 137 \
	"rank 0: round 2: .*remote process exited.*; rank 1 (pid [0-9]* on [^ ]*) has exited" -- \
	$J FAKENCCL_DIE_AT=3 FAKENCCL_DIE_RANK=1 $L -n 2 $TJ generated loop 10
expect "a process killed mid-run: the launcher names it" 137 "fuserun-launch: rank 1 (pid [0-9]*) was killed by signal KILL" -- \
	$J FAKENCCL_DIE_AT=3 FAKENCCL_DIE_RANK=1 $L -n 2 $TJ generated loop 10
expect "a process killed mid-run: rank 0 is named failing after it" 137 "fuserun-launch: rank 0 (pid [0-9]*) exited with status 3" -- \
	$J FAKENCCL_DIE_AT=3 FAKENCCL_DIE_RANK=1 $L -n 2 $TJ generated loop 10
expect "rank 0 killed mid-run: rank 1 names it" 137 "rank 1: round [0-9]: .*; rank 0 (pid [0-9]* on [^ ]*) has exited" -- \
	$J FAKENCCL_DIE_AT=5 FAKENCCL_DIE_RANK=0 $L -n 2 $TJ generated loop 10
expect "a rank without rank 0 waits for the id a bounded time" 3 \
	"code [0-9]* (a bounded wait .*): rank 1 of 2: no NCCL unique id in .*none.id after 300 ms" -- \
	$J FUSERUN_JOIN_TIMEOUT_MS=300 RANK=1 WORLD_SIZE=2 FUSERUN_NCCL_ID_FILE=$T/join/none.id $TJ generated join
expect "rank 0 alone waits for its peers a bounded time" 3 \
	"rank 0 of 2 (device 0): joining the communicator (ncclCommInitRankConfig) was not done after 300 ms" -- \
	$J FUSERUN_JOIN_TIMEOUT_MS=300 RANK=0 WORLD_SIZE=2 FUSERUN_NCCL_ID_FILE=$T/join/alone.id $TJ generated join
echo "not an id" > $T/join/bad.id
expect "a malformed unique id is refused" 3 \
	"code 1 (invalid argument): rank 1 of 2: the id file .*bad.id does not hold an NCCL unique id (256 hex digits; it has 9 characters)" -- \
	$J RANK=1 WORLD_SIZE=2 FUSERUN_NCCL_ID_FILE=$T/join/bad.id $TJ generated join
printf '%0256d\n' 0 > $T/join/zero.id
expect "a unique id NCCL refuses is NCCL's error" 3 "rank 1 of 2: ncclCommInitRankConfig: NCCL error 4: invalid argument" -- \
	$J RANK=1 WORLD_SIZE=2 FUSERUN_NCCL_ID_FILE=$T/join/zero.id $TJ generated join
expect "a malformed id in FUSERUN_NCCL_ID is refused" 3 "FUSERUN_NCCL_ID does not hold an NCCL unique id (256 hex digits; it has 255 characters)" -- \
	$J RANK=0 WORLD_SIZE=2 FUSERUN_NCCL_ID=$(printf '%0255d' 7) $TJ generated join
id=$($J $TJ generated id)
expect "two processes join from an id in FUSERUN_NCCL_ID" 0 "joined rank 1 of 2 (group size 1)" -- \
	$J FUSERUN_NCCL_ID=$id $L -n 2 $TJ generated join
expect "without libnccl every rank says so" 3 "rank 1: fz_group_join: .*cannot load the NCCL library /nonexistent" -- \
	$J FUSERUN_NCCL=/nonexistent $L -n 2 $TJ generated join
expect "a job of one process needs no NCCL" 0 "joined rank 0 of 1" -- $J FUSERUN_NCCL=/nonexistent $L -n 1 $TJ generated join
expect "a failing ncclGetUniqueId on rank 0 is reported" 3 "rank 0: fz_group_join: .*ncclGetUniqueId: NCCL error 2" -- \
	$J FAKENCCL_FAIL=ncclGetUniqueId FUSERUN_JOIN_TIMEOUT_MS=300 $L -n 2 $TJ generated join
expect "RANK that is not a number is refused" 3 "RANK=x is not a non-negative integer" -- $J RANK=x WORLD_SIZE=2 $TJ generated join
expect "a rank past the world is refused" 3 "rank 2 of 2: a job has 1 to 1024 ranks, numbered from 0" -- $J RANK=2 WORLD_SIZE=2 $TJ generated join
expect "no rank at all is refused" 3 "no rank or world size (give them, or set RANK and WORLD_SIZE" -- \
	env -u RANK -u WORLD_SIZE $J $TJ generated join
expect "no id to join by is refused" 3 "no NCCL unique id to join by" -- \
	env -u FUSERUN_NCCL_ID_FILE -u FUSERUN_NCCL_ID $J RANK=0 WORLD_SIZE=2 $TJ generated join
expect "fuserun-launch refuses -n 0" 2 "usage: fuserun-launch" -- $L -n 0 true
expect "fuserun-launch gives each process its rank, torchrun's way" 0 "rank 2 of 3, local 2 of 3, id file .*/nccl.id" -- \
	env -u FUSERUN_NCCL_ID_FILE $L -n 3 sh -c 'echo "rank $RANK of $WORLD_SIZE, local $LOCAL_RANK of $LOCAL_WORLD_SIZE, id file $FUSERUN_NCCL_ID_FILE"'
expect "fuserun-launch --world --first: this host's part of a larger job" 0 "rank 5 of 8, local 1" -- \
	$L -n 2 --world 8 --first 4 sh -c 'echo "rank $RANK of $WORLD_SIZE, local $LOCAL_RANK"'
expect "fuserun-launch: a failing rank's status, the rank named" 1 "fuserun-launch: rank 1 (pid [0-9]*) exited with status 1" -- \
	$L -n 2 sh -c 'exit $RANK'
expect "fuserun-launch stops ranks that outlive the grace after a failure" 1 "rank 1 (pid [0-9]*) was killed by signal TERM" -- \
	timeout 30 $L -n 2 --grace 1 sh -c '[ $RANK = 0 ] && exit 1; exec sleep 20' 
# the example and fuserun bench, one process per device
expect "te_mgpu procs: two processes run the sharded estimator, rank 0 compares" "0 1" \
	"result te N=67 devices=2 procs=yes .*identical_to_1=" -- $J $L -n 2 bin/te_mgpu generated 67 procs 2
expect "spiking_mgpu procs: two processes exchange on the devices, rank 0 compares with one device" 0 \
	"result spiking N=2000 steps=4 devices=2 procs=yes .*identical_to_1=yes" -- $J $L -n 2 bin/spiking_mgpu generated 2000 4 procs
expect "spiking_mgpu procs: an overflow redone alike in both processes (lag), results identical to one device" 0 \
	"result spiking N=2000 steps=5 devices=2 procs=yes .*exchange=lag urgent=yes mean_capacity=[0-9]* redos=1 identical_to_1=yes" -- \
	$J SPIKING_MGPU_EXCHANGE=lag SPIKING_MGPU_URGENT=1 SPIKING_MGPU_FORCE_REDO=2 $L -n 2 bin/spiking_mgpu generated 2000 5 procs
expect "spiking_mgpu procs: the counts first (sync) across processes" 0 \
	"result spiking N=2000 steps=4 devices=2 procs=yes .*exchange=sync .*identical_to_1=yes" -- \
	$J SPIKING_MGPU_EXCHANGE=sync $L -n 2 bin/spiking_mgpu generated 2000 4 procs
ps() { $J FAKECUDA_COUNT=cuStreamSynchronize,cuStreamQuery RANK=0 WORLD_SIZE=1 bin/spiking_mgpu generated 2000 "$1" procs 2>&1 | grep '^fakecuda:' | tr '\n' ' '; }
p2=$(ps 2) p10=$(ps 10)
[ -n "$p2" ] && [ "$p2" = "$p10" ] && ok "spiking_mgpu procs: no host synchronisation inside the step loop" ||
	bad "spiking_mgpu procs: no host synchronisation inside the step loop" "2 steps: $p2; 10 steps: $p10"
expect "spiking_mgpu procs: a process killed mid-run, its peer names it" 137 \
	"spiking_mgpu: step [0-9]*: .*remote process exited.*; rank 1 (pid [0-9]* on [^ ]*) has exited" -- \
	$J FAKENCCL_DIE_AT=5 FAKENCCL_DIE_RANK=1 $L -n 2 bin/spiking_mgpu generated 2000 6 procs
expect "fuserun bench --devices 2 --procs: one process a device, rank 0 reports" "0 1" '"devices": 2, "processes": 2' -- \
	$J FUSERUN_LAUNCH=$L $FUSERUN bench gemv_axpby_sum --size M=101,N=30 --devices 2 --procs --reps 3 --json
expect "fuserun bench --procs without its launcher says so" 2 "no launcher /nonexistent" -- \
	$J FUSERUN_LAUNCH=/nonexistent $FUSERUN bench kl_divergence --size N=1000 --devices 2 --procs
expect "fuserun bench --procs needs --devices" 2 "procs needs --devices" -- $FUSERUN bench kl_divergence --size N=1000 --procs
expect "fuserun bench --procs: a job of another size is refused" 2 "the job has 3 ranks (WORLD_SIZE), --devices says 2" -- \
	$J $L -n 3 $FUSERUN bench kl_divergence --size N=1000 --devices 2 --procs --reps 2
