#!/bin/sh
# Session 40, call 3 (H100): issue 25's fp8 outputs.
#  1. tests/gpu/tiles.sh validate on the two fp8-out tile specs (and the
#     bf16-out fp8 spec beside them): every size on TMA, plain loads and the
#     sm_80 PTX (the software rounding)
#  2. compute-sanitizer memcheck on both, TMA, plain loads and sm_80
#  3. the point kernel's fp8 store (tests/codegen/cg_fp8_out.fuse) validated
#     at awkward sizes on sm_90a and the sm_80 PTX, and its bytes against
#     torch's conversion through the Python package (fp8_py.py)
#  4. 8192^3 timings: e4m3 out against bf16 out (matmul_bias_relu_fp8)
# Before (CPU): make lib/libfuserun.a lib/libfuserun.so bin/fuserun;
#   bin/fusec -o build/cgf8 tests/codegen/cg_fp8_out.fuse. Carry: lib bin build/cgf8.
set -u
OUT=${OUT:-/tmp/s40c3}
mkdir -p "$OUT"
START=$(date +%s)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export FUSERUN_LIB=$(pwd)/lib/libfuserun.so
exec >"$OUT/summary.txt" 2>&1
echo "s40 call 3: $(date -u +%FT%TZ)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "=== 1. tiles validate (t=$(( $(date +%s) - START )))"
OUT=build/s40t TILES_SPECS="fp8_out_e4m3 fp8_out_e5m2_bmm matmul_bias_relu_fp8" timeout 300 sh tests/gpu/tiles.sh validate > build/s40t.log 2>&1
echo "--- exit $?"
grep -c "PASS" build/s40t/tiles-validate.txt; grep -v "PASS" build/s40t/tiles-validate.txt | head -20; tail -3 build/s40t/tiles-validate.txt
cp build/s40t/tiles-validate.txt $OUT/ 2>/dev/null
B=build/gpu
echo "=== 2. memcheck (t=$(( $(date +%s) - START )))"
for a in "" --no-tma "--ptx $B/layouts/fp8_out_e4m3.sm_80.ptx"; do
	timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/v_fp8_out_e4m3 --dir $B/layouts M=129 K=67 N=251 --once $a 2>&1 | tail -2
	echo "--- memcheck fp8_out_e4m3 129x67x251 $a: exit $?"
done
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/v_fp8_out_e4m3 --dir $B/layouts M=256 K=128 N=512 --once 2>&1 | tail -2
echo "--- memcheck fp8_out_e4m3 256x128x512 (TMA): exit $?"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/v_fp8_out_e5m2_bmm --dir $B/layouts Bt=3 M=129 K=67 N=251 --once 2>&1 | tail -2
echo "--- memcheck fp8_out_e5m2_bmm: exit $?"
echo "=== 3. point kernel (t=$(( $(date +%s) - START )))"
sh tests/gpu/build_driver.sh cg_fp8_out build/cgf8 build/cgf8/v -L$CUDA_HOME/lib64/stubs -lcuda || echo "no driver"
for sz in "R=1 C=1" "R=37 C=1001" "R=4096 C=4099" "R=3 C=5"; do
	for m in "" --misalign "--ptx build/cgf8/cg_fp8_out.sm_80.ptx"; do timeout 60 build/cgf8/v $sz --dir build/cgf8 --seed 9 --reps 3 $m | tail -1; echo "--- $sz $m: exit $?"; done
done
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 build/cgf8/v R=37 C=1001 --dir build/cgf8 --once --misalign 2>&1 | tail -2
echo "--- memcheck cg_fp8_out: exit $?"
timeout 60 python3 bench/runs/s40-call3-h100/fp8_py.py build/cgf8/cg_fp8_out.manifest
echo "--- fp8_py: exit $?"
echo "=== 4. 8192^3 (t=$(( $(date +%s) - START )))"
for i in 1 2; do
	timeout 60 $B/v_fp8_out_e4m3 --dir $B/layouts M=8192 K=8192 N=8192 --reps 20 --flush --time-only | tail -1
	timeout 60 $B/v_matmul_bias_relu_fp8 --dir generated M=8192 K=8192 N=8192 --reps 20 --flush --time-only | tail -1
done
echo "=== done in $(( $(date +%s) - START )) s"
