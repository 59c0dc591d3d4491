"""PyTorch's attention beside ours (issue 22): at each size, the median time
of scaled_dot_product_attention (a FlashAttention or cuDNN kernel), of the
textbook code under torch.compile, and of it in eager mode, bf16, measured
with triton.testing.do_bench (L2 flushed before each run, warm-up 25 ms,
median of 100 ms of runs). Prints one line a size and writes JSON.
   python3 bench/attn_peers.py OUT.json B,T,D[,causal] ...
"""
import json
import math
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench


def textbook(q, k, v, scale):  # specs/attention.fuse, as a new user writes it
    s = torch.matmul(q, k.transpose(-1, -2)).float() * scale
    p = torch.softmax(s, dim=-1).to(q.dtype)
    return torch.matmul(p, v)


def textbook_causal(q, k, v, scale):
    s = torch.matmul(q, k.transpose(-1, -2)).float() * scale
    t = s.shape[-1]
    mask = torch.ones(t, t, dtype=torch.bool, device=s.device).tril()
    s = s.masked_fill(~mask, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1).to(q.dtype), v)


def main():
    out, rows = sys.argv[1], []
    torch.manual_seed(0)
    compiled = {False: torch.compile(textbook), True: torch.compile(textbook_causal)}
    for arg in sys.argv[2:]:
        f = arg.split(",")
        b, t, d, causal = int(f[0]), int(f[1]), int(f[2]), len(f) > 3 and f[3] == "causal"
        q, k, v = (torch.randn(b, t, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        scale = 1.0 / math.sqrt(d)
        flops = 4.0 * b * t * t * d / (2 if causal else 1)
        sdpa = do_bench(lambda: F.scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0),
                                                               is_causal=causal, scale=scale), return_mode="median")
        tb = textbook_causal if causal else textbook
        comp = do_bench(lambda: compiled[causal](q, k, v, scale), return_mode="median")
        eager = do_bench(lambda: tb(q, k, v, scale), return_mode="median")
        r = {"B": b, "T": t, "D": d, "causal": causal, "sdpa_ms": sdpa, "compile_ms": comp, "eager_ms": eager,
             "sdpa_tflops": flops / sdpa / 1e9}
        rows.append(r)
        print(f"B={b} T={t} D={d}{' causal' if causal else ''}: sdpa {sdpa:.4f} ms ({r['sdpa_tflops']:.0f} TFLOP/s), "
              f"compile {comp:.4f}, eager {eager:.4f}", flush=True)
    json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, open(out, "w"), indent=1)


main()
