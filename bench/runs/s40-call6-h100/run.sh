#!/bin/sh
# Session 40, call 6 (H100): ncu on the wide streamed rows after the online
# max/sum (issue 21's next step): cross_entropy (1.16x compile) and
# softmax_wide, ours against torch.compile's kernel, to test the hypothesis
# that a 1024-thread row a block stalls on its block-wide reductions.
# Carry: lib bin bench/corpus/gen.
set -u
OUT=${OUT:-/tmp/s40c6}
mkdir -p "$OUT" build/s40n
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
exec >"$OUT/summary.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis"
for n in cross_entropy softmax_wide; do
	sh tests/gpu/build_driver.sh $n bench/corpus/gen build/s40n/v_$n -L$CUDA_HOME/lib64/stubs -lcuda || echo "no driver $n"
done
timeout 120 ncu $S -k regex:cross_entropy_f0 -c 1 build/s40n/v_cross_entropy R=4096 C=32768 --dir bench/corpus/gen --once 2>&1 | grep -v "^==PROF==" | tail -80
timeout 120 ncu $S -k regex:softmax_wide_f0 -c 1 build/s40n/v_softmax_wide R=256 C=262144 --dir bench/corpus/gen --once 2>&1 | grep -v "^==PROF==" | tail -80
cat > build/s40n/ce.py <<'PY'
import torch, torch.nn.functional as F
X = torch.randn(4096, 32768, device="cuda"); y = torch.randint(0, 32768, (4096,), device="cuda")
f = torch.compile(lambda X, y: F.cross_entropy(X, y, reduction="none"))
for _ in range(3): f(X, y)
torch.cuda.synchronize()
f(X, y); torch.cuda.synchronize()
PY
timeout 200 ncu $S -k regex:triton -c 1 --launch-skip 3 python3 build/s40n/ce.py 2>&1 | grep -v "^==PROF==" | tail -80
echo done
