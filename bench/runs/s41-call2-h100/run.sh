#!/bin/sh
# Session 41, call 2 (H100): cross_entropy's torch.compile time three ways
# and both kernels' durations under ncu at the running clocks (no clock or
# cache control), against ours timed by validate --flush.
# Carry: lib bin build/tune.
set -u
OUT=${OUT:-/tmp/s41c2}
mkdir -p "$OUT" build/s41
CU=${CUDA_HOME:-/usr/local/cuda}
exec >"$OUT/summary.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; date -u +%FT%TZ
D=build/tune/gen/cross_entropy/base
sh tests/gpu/build_driver.sh cross_entropy $D build/s41/v_ce -L$CU/lib64/stubs -lcuda || echo "no driver"
build/s41/v_ce R=4096 C=32768 --dir $D --flush --time-only --reps 50 | tail -2
python3 bench/runs/s41-call2-h100/ce_time.py 2>&1 | grep -v Warning
M="--clock-control none --cache-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,sm__cycles_elapsed.avg.per_second"
ncu $M -k regex:cross_entropy_f0 -c 3 build/s41/v_ce R=4096 C=32768 --dir $D --time-only --reps 3 2>&1 | grep -E "cross_entropy_f0|duration|bytes|per_second"
cat > build/s41/ce2.py <<'PY'
import torch, torch.nn.functional as F
X = torch.randn(4096, 32768, device="cuda"); y = torch.randint(0, 32768, (4096,), device="cuda", dtype=torch.int32)
cf = torch.compile(lambda X, y: F.cross_entropy(X, y.long(), reduction="none"), dynamic=False)
for _ in range(6): cf(X, y)
torch.cuda.synchronize()
PY
ncu $M -k regex:triton -c 4 --launch-skip 4 python3 build/s41/ce2.py 2>&1 | grep -E "triton_|duration|bytes|per_second"
echo done
