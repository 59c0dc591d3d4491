#!/bin/sh
# One GPU call: build the prototypes, sweep them beside torch.compile, and
# profile today's generated kernels with ncu. Writes $OUT.
#   sh bench/proto/run.sh [--quick]
set -u
out=${OUT:-build/proto}
mkdir -p "$out" build/gpu
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/device.txt" 2>&1
nvcc -O3 -arch=sm_90 -Xcompiler -fPIC -shared -o build/gpu/shapes.so bench/proto/shapes.cu || exit 1
PYTHONUNBUFFERED=1 timeout 330 python3 bench/proto/sweep.py build/gpu/shapes.so "$out/sweep.json" "$@" 2>&1 | grep -v Warning | tee "$out/sweep.txt"
if [ -z "${NO_NCU:-}" ]; then
for s in softmax:R=8192,C=8192 batchnorm_inference:B=65536,C=1024 kl_divergence:N=67108864; do
	n=${s%%:*}; sz=$(echo ${s#*:} | tr , ' ')
	cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$n -Igenerated -I/usr/local/cuda/include -include $n.h \
		tests/gpu/validate.c generated/${n}_ref.c -L/usr/local/cuda/lib64/stubs -lcuda -lm -o build/gpu/v_$n
	timeout 60 ncu --launch-count 1 -k regex:${n}_f0 --section SpeedOfLight --section LaunchStats --section Occupancy \
		--section MemoryWorkloadAnalysis build/gpu/v_$n $sz --reps 3 > "$out/ncu_$n.txt" 2>&1
	grep -E "Duration|Throughput|Registers|Achieved Occupancy|Theoretical Occ|Block Limit|Grid Size|Block Size|Waves" "$out/ncu_$n.txt" | head -24
done
fi
