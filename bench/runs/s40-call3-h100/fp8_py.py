"""Issue 25, fp8 outputs on a GPU through the Python package: cg_fp8_out's
bytes (Q = X / s as e4m3, P = X * s as e5m2, each rounded to nearest even and
saturated) against torch's conversion of the same f32 values, clamped first
(torch's float8 casts do not saturate). Inputs span past both formats' range,
with infinities; NaN in, NaN out. Prints the share of equal bytes a case."""
import sys
sys.path.insert(0, "python")
import torch
import fuserun

art = fuserun.load(sys.argv[1] if len(sys.argv) > 1 else "build/cgf8/cg_fp8_out.manifest")
torch.manual_seed(3)
bad = 0
for R, C in [(1, 1), (37, 1001), (1024, 4096)]:
    X = torch.randn(R, C, device="cuda") * torch.logspace(-12, 6, C, base=2.0, device="cuda")
    if R * C > 8:
        X.view(-1)[3] = float("inf"); X.view(-1)[5] = float("-inf")
    s = 0.7
    Q, P = art(X, s)
    q = (X * (1.0 / s)).clamp(-448, 448).to(torch.float8_e4m3fn)
    q2 = (X / s).clamp(-448, 448).to(torch.float8_e4m3fn)
    p = (X * s).clamp(-57344, 57344).to(torch.float8_e5m2)
    eq_q = ((Q.view(torch.uint8) == q.view(torch.uint8)) | (Q.view(torch.uint8) == q2.view(torch.uint8))).float().mean().item()
    eq_p = (P.view(torch.uint8) == p.view(torch.uint8)).float().mean().item()
    flag = "" if eq_q == 1.0 and eq_p == 1.0 else "   <- DIFFER"
    bad += bool(flag)
    print(f"R={R} C={C}: e4m3 bytes equal {eq_q:.6f}, e5m2 {eq_p:.6f}{flag}")
X = torch.full((2, 3), float("nan"), device="cuda")
Q, P = art(X, 1.0)
nan_ok = torch.isnan(Q.float()).all().item() and torch.isnan(P.float()).all().item()
print("NaN in, NaN out:", nan_ok)
print("fp8_py:", "all equal" if not bad and nan_ok else "DIFFER")
sys.exit(1 if bad or not nan_ok else 0)
