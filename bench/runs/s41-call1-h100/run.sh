#!/bin/sh
# Session 41, call 1 (H100): [1] the tuner on the row chains it had not
# reached (softmax_scaled_masked, top1, softmax_bf16) and the two >1.10x
# rows (cross_entropy, row_argmax); [2] ncu --set full on cross_entropy,
# ours beside torch.compile's Triton kernel, whole reports; [3] issue 24:
# what the pieces of Python's call cost (guard terms), gpu_torch 3 rounds.
# Carry: lib bin build/tune (ncu on its base build of cross_entropy).
set -u
OUT=${OUT:-/tmp/s41c1}
mkdir -p "$OUT" build/s41
CU=${CUDA_HOME:-/usr/local/cuda}
S=$OUT/summary.txt
exec >"$S" 2>&1
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
echo "--- [1] tune run"
timeout ${TUNE_LIMIT:-300} python3 bench/tune.py run --reps 30 > build/s41/tune.log 2>&1
echo "tune rc $? ($(( $(date +%s) - t0 )) s)"; tail -5 build/s41/tune.log
cp build/tune/times.jsonl $OUT/ 2>/dev/null
echo "--- [2] ncu cross_entropy ($(( $(date +%s) - t0 )) s)"
sh tests/gpu/build_driver.sh cross_entropy build/tune/gen/cross_entropy/base build/s41/v_ce -L$CU/lib64/stubs -lcuda || echo "no driver"
timeout 150 ncu --set full -k regex:cross_entropy_f0 -c 1 build/s41/v_ce R=4096 C=32768 --dir build/tune/gen/cross_entropy/base --once > $OUT/ncu_ours.txt 2>&1; echo "ncu ours rc $?"
cat > build/s41/ce.py <<'PY'
import torch, torch.nn.functional as F
X = torch.randn(4096, 32768, device="cuda"); y = torch.randint(0, 32768, (4096,), device="cuda")
f = torch.compile(lambda X, y: F.cross_entropy(X, y, reduction="none"))
for _ in range(3): f(X, y)
torch.cuda.synchronize()
f(X, y); torch.cuda.synchronize()
PY
timeout 200 ncu --set full -k regex:triton -c 1 --launch-skip 3 python3 build/s41/ce.py > $OUT/ncu_triton.txt 2>&1; echo "ncu triton rc $?"
grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|Executed Instructions  |Block Size|Grid Size" $OUT/ncu_ours.txt $OUT/ncu_triton.txt
echo "--- [3] issue 24 ($(( $(date +%s) - t0 )) s)"
python3 bench/runs/s41-call1-h100/guard.py
PYTHONPATH=python timeout 60 python3 python/tests/bench_overhead.py --torch --parts --calls 20000 2>&1 | tail -30
for i in 1 2 3; do timeout 90 python3 python/tests/gpu_torch.py --chains add_rmsnorm,softmax 2>&1 | tail -6; done
echo "done ($(( $(date +%s) - t0 )) s)"
