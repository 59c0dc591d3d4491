#!/bin/sh
# Every GPU check in one device call, for when device time is scarce: on a
# machine of two GPUs, the multi-GPU bench first with both GPUs to itself
# (bench/mgpu.sh), then the persistent pipelines alone on GPU 0 (their
# timings are launch-bound and must not share it) while GPU 1 runs the
# correctness jobs side by side: tests/gpu/run.sh validate in four groups,
# compute-sanitizer over the specs named in $SANITIZE, tests/gpu/tiles.sh
# validate and the runtime smoke test. On one GPU the jobs run in the same
# order on it. Each job runs in its own copy of the tree (run.sh's build
# folder is shared otherwise) and under its own timeout, so the call ends
# with whatever finished.
#   sh tests/gpu/all.sh        (about 4-5 minutes on an nvidia-h100-x2)
# $OUT gets at most 7 files (the device tool brings back 8): summary.txt,
# pipe.txt, validate.txt, tiles.txt, rt.txt, and mgpu.md/mgpu.txt.
# Exit 0 when every job finished and passed.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=${OUT:-build/gpu-all}
W=${TMPDIR:-/tmp}/fz-gpu-all
T=${JOB_TIMEOUT:-170}
SANITIZE=${SANITIZE:-"softmax transfer_entropy transfer_entropy_shard belief_update spike_burst colstats active_inference_step attention attention_causal add_rmsnorm groupnorm"}
mkdir -p "$R" || exit 1
rm -rf "$W"; mkdir -p "$W" || exit 1
sum=$R/summary.txt
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
{ echo "# tests/gpu/all.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null)"; nvidia-smi -L 2>&1; } > "$sum"
[ "$ngpu" -ge 1 ] || { echo "all.sh: no GPU here (nvidia-smi lists none): nothing run" | tee -a "$sum"; exit 2; }
t0=$(date +%s)
other=0; [ "$ngpu" -ge 2 ] && other=1

if [ "$ngpu" -ge 2 ] && [ -z "${SKIP_MGPU:-}" ]; then
	OUT=$R timeout "${MGPU_TIMEOUT:-110}" sh bench/mgpu.sh > "$W/mgpu.log" 2>&1
	echo "job mgpu rc=$? at $(($(date +%s) - t0))s" >> "$sum"
fi

# job NAME GPU COMMAND...: COMMAND in a copy of the tree, on that GPU, in the background
job() {
	name=$1 gpu=$2; shift 2
	d=$W/$name
	mkdir -p "$d/out" && cp -a . "$d/tree" || { echo "job $name: cannot copy the tree" >> "$sum"; return; }
	( cd "$d/tree" && CUDA_VISIBLE_DEVICES=$gpu OUT=$d/out timeout "$T" "$@" > "$d/log" 2>&1
	  echo "job $name gpu=$gpu rc=$? at $(($(date +%s) - t0))s" >> "$sum" ) &
}
job pipe 0 sh tests/gpu/pipeline.sh "$W/pipe/out"
job v1 $other env GPU_PHASE=validate sh tests/gpu/run.sh transfer_entropy spike_burst kl_divergence relu sigmoid
job v2 $other env GPU_PHASE=validate sh tests/gpu/run.sh transfer_entropy_shard spike_burst_shard softmax tanh vector_add
job v3 $other env GPU_PHASE=validate sh tests/gpu/run.sh belief_update active_inference_step batchnorm_inference gemv_axpby_sum prediction_error colstats
job v4 $other env GPU_PHASE=validate sh tests/gpu/run.sh attention attention_lse attention_causal add_rmsnorm groupnorm
job san $other env GPU_PHASE=sanitize sh tests/gpu/run.sh $SANITIZE
job tiles $other sh tests/gpu/tiles.sh validate
job rt $other sh runtime/tests/gpu.sh
wait

cat "$W/pipe/log" > "$R/pipe.txt" 2>/dev/null
for f in "$W"/pipe/out/sanitizer_*.txt; do [ -f "$f" ] && { echo "== $f"; tail -3 "$f"; }; done >> "$R/pipe.txt"
for j in v1 v2 v3 v4 san; do echo "== $j"; cat "$W/$j/log"; done > "$R/validate.txt" 2>&1
cat "$W/tiles/log" > "$R/tiles.txt" 2>&1
cat "$W/rt/log" > "$R/rt.txt" 2>&1
[ -f "$W/mgpu.log" ] && [ ! -s "$R/mgpu.txt" ] && cp "$W/mgpu.log" "$R/mgpu.txt"
# every job's last summary line, then the verdict
for j in pipe v1 v2 v3 v4 san tiles rt; do echo "$j: $(grep -E 'passed|PASS:|FAIL' "$W/$j/log" 2>/dev/null | tail -1)"; done >> "$sum"
n=$(grep -c '^job ' "$sum"); bad=$(grep '^job ' "$sum" | grep -vc 'rc=0 ')
echo "all.sh: $n jobs, $bad not clean, $(($(date +%s) - t0))s" >> "$sum"
cat "$sum"
[ "$bad" = 0 ]
