import torch, sys
from triton.testing import do_bench
dev = "cuda"; n = 8192
torch.manual_seed(1)
A = (torch.rand(n, n, device=dev) * 2 - 1).to(torch.float8_e4m3fn)
B = (torch.rand(n, n, device=dev) * 2 - 1).to(torch.float8_e4m3fn)   # stored [N,K]
sa = torch.tensor(0.9, device=dev); sb = torch.tensor(1.1, device=dev)
bias = (torch.rand(n, device=dev) * 2 - 1).to(torch.bfloat16)
Ab = A.to(torch.bfloat16); Bb = B.to(torch.bfloat16).t().contiguous()
fl = 2 * n ** 3
def med(fn):
    r = sorted(do_bench(fn, warmup=25, rep=200, return_mode="median") for _ in range(3)); return r[1]
print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, flush=True)
cases = {
 "scaled_mm bf16 out (fast_accum False)": lambda: torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16),
 "scaled_mm bf16 out (fast_accum True)": lambda: torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=True),
 "relu(scaled_mm + bias) (fast_accum False)": lambda: torch.relu(torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb, bias=bias, out_dtype=torch.bfloat16)),
 "relu(scaled_mm + bias) (fast_accum True)": lambda: torch.relu(torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb, bias=bias, out_dtype=torch.bfloat16, use_fast_accum=True)),
 "bf16 A@B (torch)": lambda: Ab @ Bb,
}
for k, f in cases.items():
    try:
        t = med(f); print(f"PEER {k:45s} {t:.4f} ms {fl / t / 1e9:.0f} TFLOP/s", flush=True)
    except Exception as e: print("PEER", k, "failed", e, flush=True)
# accuracy of scaled_mm vs float64 at 8192 (rows 0..63): fast accum and not
ref = (A[:64].double() @ B.double().t()) * (0.9 * 1.1)
for fa in (False, True):
    o = torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb, out_dtype=torch.float32, use_fast_accum=fa)[:64].double()
    print(f"PEER accuracy fast_accum={fa}: max|diff|/max|ref| = {((o - ref).abs().max() / ref.abs().max()).item():.3e}", flush=True)
