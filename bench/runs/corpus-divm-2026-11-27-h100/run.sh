#!/bin/sh
# One H100 call (issue 21, fz_divm): the shipped specs whose PTX changed
# validated (tests/gpu/run.sh, 12 at once), memcheck on two point chains at
# odd sizes, then the corpus at its headline sizes against torch eager and
# torch.compile (bench/corpus/run.sh HEADLINE=1), the point chains' artifacts
# from before fz_divm (build/corpus-base/gen, 16976fa) timed after ours.
# Everything into $OUT/corpus.tgz and $OUT/summary.txt.
# Carry: bench/corpus/gen build/corpus-base lib.
O=${OUT:-build/cd}; mkdir -p $O; S=$O/summary.txt; : > $S
R=build/cd-res; rm -rf $R; mkdir -p $R
CS=/usr/local/cuda/bin/compute-sanitizer; CU=/usr/local/cuda
say() { echo "$*" | tee -a $S; }
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) $(date -u +%FT%TZ)"
make -s lib/libfuserun.a; t0=$(date +%s)
# issue 25's e5m2 beside (correctness only, so sharing the GPU): the layout
# specs prebuilt into build/gpu/layouts (carried), every size and path, memcheck, K = 8192
(
	mkdir -p build/gpu-t && cp -r build/gpu/layouts build/gpu-t/
	TILES_B=build/gpu-t TILES_SPECS="fp8_e5m2_mk_nk fp8_e5m2_bmm fp8_bmm matmul_bias_relu_fp8" OUT=$R sh tests/gpu/tiles.sh validate > $R/tiles.log 2>&1
	echo "tiles validate rc $?: $(tail -1 $R/tiles-validate.txt)" > $R/e5m2.txt
	grep -B1 -A2 FAIL $R/tiles-validate.txt | grep -v "FAIL fusec" | head -20 >> $R/e5m2.txt
	V=build/gpu-t; D=build/gpu-t/layouts
	for a in "v_fp8_e5m2_mk_nk M=129 K=67 N=251" "v_fp8_e5m2_mk_nk M=129 K=64 N=251" "v_fp8_e5m2_mk_nk M=129 K=67 N=251 --ptx $D/fp8_e5m2_mk_nk.sm_80.ptx" \
		"v_fp8_e5m2_bmm Bt=3 M=129 K=67 N=251" "v_fp8_e5m2_bmm Bt=3 M=129 K=64 N=256" "v_fp8_e5m2_bmm Bt=3 M=129 K=67 N=251 --ptx $D/fp8_e5m2_bmm.sm_80.ptx"; do
		set -- $a; x=$1; shift
		$CS --tool memcheck --error-exitcode 9 $V/$x --dir $D "$@" --reps 1 > $R/cs_e.txt 2>&1
		echo "memcheck $x $*: rc $? $(grep 'ERROR SUMMARY' $R/cs_e.txt)" >> $R/e5m2.txt
	done
	for a in "v_fp8_e5m2_mk_nk M=512 K=8192 N=512" "v_fp8_e5m2_bmm Bt=1 M=512 K=8192 N=512" "v_fp8_bmm Bt=1 M=512 K=8192 N=512"; do
		set -- $a; x=$1; shift
		echo "K=8192 $x: $($V/$x --dir $D "$@" --reps 2 2>&1 | grep -v '^  ' | tail -2 | tr '\n' ' ')" >> $R/e5m2.txt
	done
) &
tp=$!
OUT=$R JOBS=12 GPU_PHASE=validate sh tests/gpu/run.sh add_rmsnorm batchnorm_inference bmm_bias_relu groupnorm linear_bias_gelu \
	matmul_bias_gelu matmul_bias_relu matmul_residual softmax transfer_entropy kl_divergence prediction_error belief_update > $R/specs.log 2>&1
say "specs validate ($(( $(date +%s) - t0 )) s): $(tail -1 $R/specs.log)"
grep -E '^FAIL' $R/specs.log | head -10 >> $S
for x in "rotary_bf16 B=3 H=5 T=7 D=6" "bcast_mid_bf16 B=3 T=5 C=13" "rotary_bf16 B=2 H=3 T=5 D=16"; do
	set -- $x; n=$1; shift
	[ -x $R/v_$n ] || sh tests/gpu/build_driver.sh $n bench/corpus/gen $R/v_$n -L$CU/lib64/stubs -lcuda > /dev/null 2>&1
	$CS --tool memcheck --error-exitcode 9 $R/v_$n "$@" --dir bench/corpus/gen --reps 1 > $R/cs.txt 2>&1
	say "memcheck $x: rc $? $(grep 'ERROR SUMMARY' $R/cs.txt)"
done
wait $tp; cat $R/e5m2.txt >> $S
OUT=$R/corpus HEADLINE=1 DEADLINE=${DL:-410} VJOBS=12 PJOBS=8 BASE=build/corpus-base/gen sh bench/corpus/run.sh > $R/corpus.log 2>&1
say "corpus rc $? ($(( $(date +%s) - t0 )) s in all)"
cat $R/corpus/log.txt >> $S 2>/dev/null
tail -25 $R/corpus/table.md >> $S 2>/dev/null
tar czf $O/corpus.tgz -C $R . 2>/dev/null
say done
