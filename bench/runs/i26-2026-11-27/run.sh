#!/bin/sh
# Issue 26, one call on a 4-GPU H100 (nvidia-h100-x4): the spike exchange on
# the devices (fz_exchange, no host synchronisation in the step loop) and the
# spiking network one process per GPU. Runs `DEVICES=1,2,4 PROCS=1 sh
# bench/mgpu.sh` (transfer entropy and spiking, in one process and one
# process per GPU through runtime/tool/fuserun-launch.sh), then checks that
# every result is identical to one GPU (spiking: one digest over every
# step's spike set and the final potentials on every line; transfer
# entropy: te_bits per N) and reads the figures against issue 26's bars.
# Writes $OUT/summary.txt only. Needs cc, the CUDA headers, libnccl (the
# loader's, the toolkit's or PyTorch's pip package: bench/mgpu.sh finds it)
# and the committed generated/; builds nothing with fusec.
#   run from the repository root: sh bench/runs/i26-2026-11-27/run.sh
#   carry: lib (nothing else is needed: bench/mgpu.sh compiles runtime/*.c)
# Bounded: bench/mgpu.sh under `timeout 360` (its own steps have timeouts too).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
O=${OUT:-build/i26}
R=build/i26-res
mkdir -p "$O" "$R" || exit 1
S=$O/summary.txt
: > "$S"
say() { printf '%s\n' "$*" | tee -a "$S"; }
t0=$(date +%s)
say "# issue 26 spike exchange on the devices, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>&1 | tee -a "$S"
DEVICES=${DEVICES:-1,2,4} PROCS=1 OUT=$R timeout 360 sh bench/mgpu.sh > $R/run.log 2>&1
rc=$?
say "bench/mgpu.sh: exit $rc after $(( $(date +%s) - t0 )) s (0 ok; 1 a failure or a difference; 2 no GPU or NCCL; 124 timed out)"
grep -m1 '^NCCL:' $R/mgpu.txt 2>/dev/null | tee -a "$S"
say ""
say "## table (bench/mgpu.sh)"
cat $R/mgpu.md >> "$S" 2>/dev/null
say ""
say "## result lines"
grep 'result ' $R/mgpu.txt >> "$S" 2>/dev/null

# checks: every spiking line (rank 0's one-device comparisons too) one digest,
# identical_to_1=yes everywhere; te_bits equal per N
say ""
say "## checks"
v() { tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }
sp=$(grep 'result spiking ' $R/mgpu.txt 2>/dev/null)
nd=$(printf '%s\n' "$sp" | grep -c digest=)
digests=$(printf '%s\n' "$sp" | tr ' ' '\n' | sed -n 's/^digest=//p' | sort -u)
if [ "$nd" -ge 5 ] && [ "$(printf '%s\n' "$digests" | wc -l)" = 1 ]; then say "PASS spiking: $nd result lines, one digest $digests"
else say "FAIL spiking: $nd result lines (want 5 or more: 1, 2, 4 in one process, 2 and 4 one process per GPU, and their one-GPU runs), digests: $(echo $digests)"; fi
# the host-synchronised exchange's digest at these sizes (H100 and H200, 2026-11-25/26): the
# same unless the network ever fell silent (silent_steps=0 expected)
[ "$digests" = b95fdb2452c20026 ] && say "PASS spiking: the digest of the earlier host-synchronised exchange (b95fdb2452c20026)" ||
	say "NOTE spiking: digest $(echo $digests), the earlier host-synchronised version's was b95fdb2452c20026 (silent steps: $(printf '%s\n' "$sp" | tr ' ' '\n' | sed -n 's/^silent_steps=//p' | sort -u | tr '\n' ' '))"
printf '%s\n' "$sp" | grep -q 'identical_to_1=NO' && say "FAIL spiking: a line says identical_to_1=NO" || say "PASS spiking: every line identical_to_1=yes"
for n in $(grep 'result te N=' $R/mgpu.txt 2>/dev/null | sed -n 's/.* N=\([0-9]*\) .*/\1/p' | sort -u); do
	b=$(grep "result te N=$n " $R/mgpu.txt | tr ' ' '\n' | sed -n 's/^te_bits=//p' | sort -u)
	[ "$(printf '%s\n' "$b" | wc -l)" = 1 ] && say "PASS te N=$n: one te_bits $b over $(grep -c "result te N=$n " $R/mgpu.txt) lines" ||
		say "FAIL te N=$n: te_bits $(echo $b)"
done

# the bars (issue 26): 4 GPUs spiking >= 3.6x, te >= 3.9x (against the best one-GPU run);
# one process per GPU within 5% of one process
say ""
say "## bars"
fig() { grep "$1" $R/mgpu.txt | grep -v '^(procs)' | head -1 | v "$2"; }
s4=$(fig 'result spiking .* devices=4 step' speedup); s4p=$(fig 'result spiking .* devices=4 procs=yes' speedup)
m4=$(fig 'result spiking .* devices=4 step' step_ms); m4p=$(fig 'result spiking .* devices=4 procs=yes' step_ms)
x4=$(fig 'result spiking .* devices=4 step' exchange_share); w4=$(fig 'result spiking .* devices=4 step' exposed_ms)
say "spiking 4 GPUs, one process: ${s4:-?}x (bar 3.6), ${m4:-?} ms a step, exchange share ${x4:-?} of the step on its own stream, ${w4:-?} ms a step waited for"
say "spiking 4 GPUs, one process per GPU: ${s4p:-?}x against its rank 0's one-GPU run, ${m4p:-?} ms a step (within 5% of one process: $(awk -v a="$m4" -v b="$m4p" 'BEGIN { if (a > 0 && b > 0) printf "%s, %.1f%%", (b <= 1.05 * a ? "yes" : "NO"), 100 * (b - a) / a; else print "?" }'))"
for n in $(grep 'result te N=' $R/mgpu.txt 2>/dev/null | sed -n 's/.* N=\([0-9]*\) .*/\1/p' | sort -u); do
	t4=$(fig "result te N=$n devices=4 ms" speedup_vs_best_1gpu); t4p=$(fig "result te N=$n devices=4 procs=yes" speedup_vs_best_1gpu)
	say "te N=$n 4 GPUs: ${t4:-?}x one process, ${t4p:-?}x one process per GPU, against the best one-GPU run (bar 3.9)"
done
say ""
say "## errors and the log's last lines"
grep -i 'error\|FAIL\|timed out\|cannot' $R/run.log | head -20 >> "$S"
tail -5 $R/run.log >> "$S"
say "done in $(( $(date +%s) - t0 )) s"
