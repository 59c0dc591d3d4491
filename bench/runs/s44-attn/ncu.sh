#!/bin/sh
# Issue 22, session 44: where attention's time goes at 256/1024/128 (bf16),
# ours (build/attnvar/v1) against SDPA, by ncu: the full set for each, and
# ours' SASS with its warp-state samples (which wait dominates). Carry
# build/attnvar lib; after run.sh in the same machine (build/var drivers).
O=${OUT:-build/s44ncu}; mkdir -p $O
d=build/attnvar/v1
[ -x build/var/v_attention_v1 ] || sh tests/gpu/build_driver.sh attention $d build/var/v_attention_v1 -L/usr/local/cuda/lib64/stubs -lcuda
ncu --set full --import-source no -k regex:attention --launch-skip 3 --launch-count 1 -o build/ours build/var/v_attention_v1 B=256 T=1024 S=1024 D=128 --dir $d --ptx $d/attention.sm_90a.ptx --time-only --reps 5 > build/ncu1.log 2>&1
ncu --import build/ours.ncu-rep --page details > $O/ours_details.txt 2>&1
ncu --import build/ours.ncu-rep --page source --print-source sass --csv > build/ours_src.csv 2>&1
gzip -c build/ours_src.csv > $O/ours_src.csv.gz
cat > build/sdpa.py <<'PY'
import torch, torch.nn.functional as F
q, k, v = (torch.randn(1, 256, 1024, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
for _ in range(5): F.scaled_dot_product_attention(q, k, v, scale=128 ** -0.5)
torch.cuda.synchronize()
PY
ncu --set full --launch-skip 3 --launch-count 1 -k regex:'^(?!.*(elementwise|fill|copy|distribution)).*' -o build/sdpa python3 build/sdpa.py > build/ncu2.log 2>&1
ncu --import build/sdpa.ncu-rep --page details > $O/sdpa_details.txt 2>&1
tail -3 build/ncu1.log build/ncu2.log > $O/logs.txt
grep -E "^  [a-zA-Z_].*\(|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A|Compute \(SM\) Th|Memory Through|Tensor|Dynamic Shared|Block Size|Grid Size" $O/ours_details.txt $O/sdpa_details.txt | head -60
