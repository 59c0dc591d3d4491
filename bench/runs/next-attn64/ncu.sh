#!/bin/sh
# Issue 22, prepared in session 44 and NOT YET RUN (nvidia-h100-x1; carry lib):
# the one size still above its bar, 32/1024/64 bf16 (ours 0.0290 ms, SDPA
# 0.0271, bar <= SDPA). ncu on generated/'s attention and on SDPA's kernel at
# that size, and ours' SASS stall samples summed by
# bench/runs/s44-attn/stalls.py (at 256/1024/128 this found the wait for Q).
O=${OUT:-build/nexta64}; mkdir -p $O build/var
sh tests/gpu/build_driver.sh attention generated build/var/v_attention -L/usr/local/cuda/lib64/stubs -lcuda
ncu --set full --import-source no -k regex:attention --launch-skip 3 --launch-count 1 -o build/a64 build/var/v_attention B=32 T=1024 S=1024 D=64 --ptx generated/attention.sm_90a.ptx --time-only --reps 5 > build/a64.log 2>&1
ncu --import build/a64.ncu-rep --page details > $O/ours_details.txt 2>&1
ncu --import build/a64.ncu-rep --page source --print-source sass --csv > build/a64_src.csv 2>&1
python3 bench/runs/s44-attn/stalls.py build/a64_src.csv 40 > $O/ours_stalls.txt
cat > build/sdpa64.py <<'PY'
import torch, torch.nn.functional as F
q, k, v = (torch.randn(1, 32, 1024, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
for _ in range(5): F.scaled_dot_product_attention(q, k, v, scale=64 ** -0.5)
torch.cuda.synchronize()
PY
ncu --set full --launch-skip 3 --launch-count 1 -k regex:'^(?!.*(elementwise|fill|copy|distribution)).*' python3 build/sdpa64.py > $O/sdpa_details.txt 2>&1
grep -E "^  [a-zA-Z_].*\(|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Grid Size|Dynamic Shared" $O/ours_details.txt $O/sdpa_details.txt; head -20 $O/ours_stalls.txt
