"""cross_entropy: per-row loss of f32 logits against i32 labels, 32768 classes (family: row)."""
import torch
import torch.nn.functional as F

# 4096 rows x 32768 f32 = 512 MiB read.
SIZES = [dict(R=4096, C=32768), dict(R=1024, C=32768)]
CHECK = [dict(R=1, C=32768), dict(R=3, C=32771), dict(R=7, C=1), dict(R=129, C=1001)]


def make_inputs(sizes, device):
    R, C = sizes['R'], sizes['C']
    return {
        'X': torch.randn(R, C, device=device, dtype=torch.float32),
        'y': torch.randint(0, C, (R,), device=device, dtype=torch.int32),
    }


def torch_fn(inp):
    # nll_loss takes int64 targets only; the cast is R elements
    return (F.cross_entropy(inp['X'], inp['y'].long(), reduction='none'),)
