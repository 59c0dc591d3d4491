"""torch.compile's kernel of one corpus chain at its headline size, run a few
times so that ncu (-k regex:triton) can profile it: python3 peer_ncu.py NAME"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '../../corpus'))
import torch  # noqa: E402
import harness  # noqa: E402

n = sys.argv[1]
s = harness.read_spec(n, 'bench/corpus/gen', 'bin/fusec')
mod = harness.load_chain(n)
d = mod.SIZES[0]
inp = mod.make_inputs(d, 'cuda') if hasattr(mod, 'make_inputs') else harness.default_inputs(s, d, 'cuda')
cf = torch.compile(mod.torch_fn, dynamic=False)
for _ in range(4):
    cf(inp)
torch.cuda.synchronize()
print(n, d, 'done')
