"""embedding_scale: y(t,d) = W(ids(t), d) * scale (family: gather)."""
import math
import torch
import torch.nn.functional as F

# 16384 tokens x 4096 f32 = 256 MiB gathered + 256 MiB written; table 32000 x 4096 = 500 MiB.
SIZES = [dict(T=16384, D=4096, V=32000), dict(T=65536, D=1024, V=128256)]
CHECK = [dict(T=1, D=1, V=1), dict(T=7, D=4095, V=13), dict(T=1031, D=5, V=3), dict(T=17, D=64, V=100003)]


def make_inputs(sizes, device):
    T, D, V = sizes['T'], sizes['D'], sizes['V']
    return {
        'ids': torch.randint(0, V, (T,), device=device, dtype=torch.int32),
        'W': torch.randn(V, D, device=device, dtype=torch.float32),
        'scale': math.sqrt(D),
    }


def torch_fn(inp):
    # F.embedding takes int32 ids as they are
    return (F.embedding(inp['ids'], inp['W']) * inp['scale'],)
