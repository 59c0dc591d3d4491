import math, sys, torch
import torch.nn.functional as F
from triton.testing import do_bench
torch.manual_seed(0)
for arg in sys.argv[1:]:
    f = arg.split(","); b, t, d = int(f[0]), int(f[1]), int(f[2]); causal = len(f) > 3
    q, k, v = (torch.randn(1, b, t, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ms = do_bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=1.0 / math.sqrt(d)), return_mode="median")
    print(f"SDPA B={b} T={t} D={d}{' causal' if causal else ''}: {ms:.4f} ms", flush=True)
