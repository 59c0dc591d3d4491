#!/bin/sh
# Issue 25's bars in one H100 run (session 40, after fp8 outputs; was bench/runs/issue25-2026-11-27-h100): every tile spec validated on every path
# (tests/gpu/tiles.sh validate: fp8, tf32, every operand layout), memcheck on
# the fp8 paths, then ours alone on the GPU (cold L2, as do_bench), then the
# peers (bench/layouts_peers.py: tf32 compiled with allow_tf32, bf16 layouts;
# fp8: torch._scaled_mm). Carry build/gpu/layouts (built by bin/fusec here).
R=${OUT:-build/i25run}; mkdir -p $R; L=$R/issue25.txt; : > $L
B=build/gpu; CS=/usr/local/cuda/bin/compute-sanitizer; mkdir -p $B
say() { echo "$*" | tee -a $L; }
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
W=$B/peers.go; rm -f $W
python3 bench/layouts_peers.py $W > $B/layouts_peers.txt 2>&1 &
pp=$!
t0=$(date +%s)
TILES_B=$B OUT=$B sh tests/gpu/tiles.sh validate > $B/tiles.log 2>&1
say "validate ($(( $(date +%s) - t0 )) s): $(tail -1 $B/tiles.log)"
grep -B1 -A3 'FAIL' $B/tiles-validate.txt | head -40 >> $L
for a in "M=129 K=67 N=251" "M=256 K=128 N=512" "M=7 K=1024 N=4096 --misalign" "M=129 K=64 N=256 --no-tma"; do
	$CS --tool memcheck --error-exitcode 9 $B/v_matmul_bias_relu_fp8 $a --dir generated --reps 2 > $B/cs.txt 2>&1
	say "memcheck fp8 [$a]: rc $? $(grep 'ERROR SUMMARY' $B/cs.txt)"
done
$CS --tool racecheck --error-exitcode 9 $B/v_matmul_bias_relu_fp8 M=256 K=128 N=512 --dir generated --reps 2 > $B/cs.txt 2>&1
say "racecheck fp8: rc $? $(grep 'RACECHECK SUMMARY' $B/cs.txt)"
for a in "M=129 K=67 N=251" "M=256 K=128 N=512" "M=129 K=67 N=251 --ptx $B/layouts/fp8_out_e4m3.sm_80.ptx"; do
	$CS --tool memcheck --error-exitcode 9 $B/v_fp8_out_e4m3 $a --dir $B/layouts --once > $B/cs.txt 2>&1
	say "memcheck fp8 out [$a]: rc $? $(grep 'ERROR SUMMARY' $B/cs.txt)"
done
$CS --tool racecheck --error-exitcode 9 $B/v_fp8_out_e4m3 M=256 K=128 N=512 --dir $B/layouts --once > $B/cs.txt 2>&1
say "racecheck fp8 out: rc $? $(grep 'RACECHECK SUMMARY' $B/cs.txt)"
say "--- ours, --flush --time-only (cold L2), fused ms"
t() { s=$1; shift; d=generated; [ -f tests/gpu/layouts/$s.fuse ] && d=$B/layouts
	say "$s $*: $($B/v_$s "$@" --dir $d --flush --time-only 2>&1 | grep -o ' fused=[0-9.]*ms' | head -1)"; }
for r in 1 2; do
	for s in matmul_bias_relu_bf16 matmul_at_bias_relu_bf16 bf16_mk_nk bf16_km_nk matmul_bias_tf32 tf32_mk_nk; do t $s M=4096 K=4096 N=4096 --reps 60; done
	t matmul_bias_relu_fp8 M=8192 K=8192 N=8192 --reps 50; t matmul_bias_relu_bf16 M=8192 K=8192 N=8192 --reps 50; t fp8_out_e4m3 M=8192 K=8192 N=8192 --reps 50
done
touch $W; wait $pp
say "--- bench/layouts_peers.py"; cat $B/layouts_peers.txt >> $L
say "--- fp8 peer"; python3 bench/runs/fp8-2026-11-27-h100/peer.py >> $L 2>&1
say "done"
cp $B/tiles-validate.txt $R/ 2>/dev/null
