"""Run one corpus chain's torch.compile graph a few times at SIZES[0] (for
ncu) and print inductor's code (TORCH_LOGS=output_code is set by the caller).
  python3 peer_ncu.py NAME [reps]"""
import importlib.util, sys, torch
sys.path.insert(0, 'bench/corpus')
name = sys.argv[1]
spec = importlib.util.spec_from_file_location(name, f'bench/corpus/{name}.py')
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
sz = m.SIZES[0]
import harness
inp = m.make_inputs(sz, 'cuda') if hasattr(m, 'make_inputs') else harness.default_inputs(harness.read_spec(name, 'bench/corpus/gen', 'bin/fusec'), sz, 'cuda')
f = torch.compile(m.torch_fn, dynamic=False)
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 5):
    f(inp)
torch.cuda.synchronize()
print('ran', name, sz)
