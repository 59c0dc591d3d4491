#!/bin/sh
# Attention in one kernel (issue 22), one GPU call: validate
# specs/attention.fuse against its float64 reference (awkward sizes,
# misaligned), time it at the sizes, PyTorch's SDPA, torch.compile
# and eager in the same run, then compute-sanitizer. Writes $OUT (default
# build/attn).   sh bench/attn.sh [validate|time|peers|sanitize]...
set -u
out=${OUT:-build/attn}
B=build/gpu
phases=${*:-validate time peers sanitize}
mkdir -p "$out" $B
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
for ph in $phases; do
	case $ph in
	validate)
		GPU_PHASE=validate sh tests/gpu/run.sh attention attention_lse attention_causal > "$out/validate.txt" 2>&1
		echo "validate rc=$?"; grep -v '^  ' "$out/validate.txt" | tail -14
		# the mma.sync path too (sm_90's PTX runs on an sm_90a GPU)
		for sz in "B=3 T=129 S=251 D=67" "B=2 T=200 S=77 D=200" "B=4 T=1024 S=1024 D=64" "B=2 T=67 S=1031 D=33"; do
			# shellcheck disable=SC2086
			$B/v_attention $sz --ptx generated/attention.sm_90.ptx | grep -v '^  ' | sed 's/^/sm_90 /' | tee -a "$out/validate.txt"
		done ;;
	time) # ours: fused (one kernel) and unfused, median of 50 with the L2 flushed
		: > "$out/ours.txt"
		for sz in "B=32 T=1024 S=1024 D=64" "B=256 T=1024 S=1024 D=128" "B=32 T=4096 S=4096 D=128" "B=32 T=1024 S=1024 D=128"; do
			# shellcheck disable=SC2086
			for p in sm_90a sm_90; do
				$B/v_attention $sz --ptx generated/attention.$p.ptx --flush --time-only --reps 50 2>&1 | grep -v '^  ' | sed "s/^/$p /" | tee -a "$out/ours.txt"
			done
		done
		for p in sm_90a sm_90; do
			$B/v_attention_causal B=32 T=4096 D=128 --ptx generated/attention_causal.$p.ptx --flush --time-only --reps 50 2>&1 | grep -v '^  ' | sed "s/^/$p /" | tee -a "$out/ours.txt"
		done ;;
	peers)
		PYTHONUNBUFFERED=1 timeout 300 python3 bench/attn_peers.py "$out/peers.json" 32,1024,64 256,1024,128 32,4096,128 \
			32,4096,128,causal 32,1024,128 > "$out/peers.txt" 2>&1
		echo "peers rc=$?"; tail -6 "$out/peers.txt" ;;
	sanitize)
		GPU_PHASE=sanitize sh tests/gpu/run.sh attention attention_lse attention_causal > "$out/sanitize.txt" 2>&1
		echo "sanitize rc=$?"; tail -8 "$out/sanitize.txt" ;;
	esac
done
