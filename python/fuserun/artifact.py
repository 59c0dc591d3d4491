"""An artifact on a GPU, called on torch tensors through fz_call.

Each call checks its tensors against the manifest (element type, shape at
the sizes, contiguity, device), allocates the outputs with torch, takes
torch's current stream, and launches the variant from the manifest's launch
recipe: no generated code is compiled. The scratch (the variant's temps and
reduction workspace) is a torch uint8 tensor per variant and sizes, zeroed
once and kept: calls of one artifact at the same sizes must not overlap on
different streams (they share it)."""
import ctypes
import numbers
import sys

from . import _lib
from .manifest import TYPES, Manifest


def _torch():
    torch = sys.modules.get("torch")
    if torch is None:
        import torch  # noqa: F811 (only when a device-side artifact is made)
    return torch


class _Shape:
    """What a call at one (variant, sizes) needs, computed once."""

    def __init__(self, sizes, shapes, scratch):
        self.sizes = (ctypes.c_longlong * max(1, len(sizes)))(*sizes)
        self.nsizes = len(sizes)
        self.shapes = shapes
        self.scratch = scratch


class Artifact:
    """load(path): the artifact's PTX loaded on a CUDA device (torch's
    current one by default). Call it with the inputs (input and inout
    parameters, in the manifest's order; scalars as Python numbers):
    art(x, y, variant="unfused", N=...) returns the outputs (one tensor, or
    a tuple in the manifest's order; an inout parameter's tensor is updated
    in place and returned too)."""

    def __init__(self, path, device=None):
        torch = _torch()
        self.manifest = m = Manifest(path)
        if m.format < _lib.FORMAT_WITH_RECIPE:
            raise _lib.error(9, f"{m.path}: artifact format {m.format} has no launch recipe: regenerate it")
        if device is None:
            index = torch.cuda.current_device()
        else:
            d = torch.device(device) if not isinstance(device, int) else torch.device("cuda", device)
            if d.type != "cuda":
                raise ValueError(f"fuserun runs on a CUDA device, not {d}")
            index = d.index if d.index is not None else torch.cuda.current_device()
        self.device = torch.device("cuda", index)
        self._dev, self._art = ctypes.c_void_p(), ctypes.c_void_p()
        err = ctypes.create_string_buffer(_lib.ERRMSG_SIZE)
        _lib.check(_lib.lib.fz_device_open(index, ctypes.byref(self._dev), err), err.value)
        rc = _lib.lib.fz_artifact_load(self._dev, m.path.encode(), ctypes.byref(self._art))
        if rc:
            msg = _lib.lib.fz_device_error(self._dev)
            self.close()
            _lib.check(rc, msg)
        self._dtypes = {t: getattr(torch, TYPES[t][0]) for t in TYPES}
        self._args = (_lib.Arg * max(1, len(m.params)))()
        for a, p in zip(self._args, m.params):
            a.type, a.scalar = p.btype, int(p.scalar)
        self._cache = {}
        self._torch = torch
        # the current stream's handle: torch's raw getter where it has one
        # (a fraction of a microsecond), else the public call
        raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
        self._stream = (lambda: raw(index)) if raw else (lambda: torch.cuda.current_stream(self.device).cuda_stream)

    def close(self):
        """Unloads the artifact (also when collected); its scratch tensors go with it."""
        if getattr(self, "_art", None):
            _lib.lib.fz_artifact_unload(self._art)
            self._art = None
        if getattr(self, "_dev", None):
            _lib.lib.fz_device_close(self._dev)
            self._dev = None
        self._cache = {}

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _error(self, rc):
        _lib.check(rc, _lib.lib.fz_artifact_error(self._art))

    def _prepare(self, variant, sizes):
        key = (variant, sizes)
        got = self._cache.get(key)
        if got is None:
            shapes = self.manifest.shapes_at(sizes)
            arr = (ctypes.c_longlong * max(1, len(sizes)))(*sizes)
            n = ctypes.c_ulonglong()
            self._error(_lib.lib.fz_call_scratch(self._art, variant.encode(), arr, len(sizes), ctypes.byref(n)))
            scratch = self._torch.zeros(n.value, dtype=self._torch.uint8, device=self.device)
            got = self._cache[key] = _Shape(sizes, shapes, scratch)
        return got

    def _check_tensor(self, p, x, shape):
        if x.dtype != self._dtypes[p.type]:
            raise TypeError(f"{p.name}: {self._dtypes[p.type]} ({p.type}) expected, {x.dtype} given")
        if x.shape != shape:
            raise ValueError(f"{p.name}: shape {shape} ([{','.join(p.dims)}]) expected, {tuple(x.shape)} given")
        if x.device != self.device:
            raise ValueError(f"{p.name}: on {self.device} expected, on {x.device} given")
        if not x.is_contiguous():
            raise ValueError(f"{p.name}: a contiguous tensor expected (call .contiguous())")

    def __call__(self, *inputs, variant="fused", **sizes):
        return self.run(*inputs, variant=variant, **sizes)

    def run(self, *inputs, variant="fused", **sizes):
        m = self.manifest
        if not self._art:
            raise ValueError("the artifact is closed")
        if len(inputs) != len(m.inputs):
            names = ", ".join(p.name for p in m.inputs)
            raise TypeError(f"{m.fusion} takes {len(m.inputs)} inputs ({names}), given {len(inputs)}")
        if variant not in ("fused", "unfused"):
            raise ValueError(f"variant '{variant}': fused or unfused")
        for p, x in zip(m.inputs, inputs):
            if not p.scalar and not hasattr(x, "data_ptr"):
                raise TypeError(f"{p.name}: a torch tensor expected, {type(x).__name__} given")
        shapes = [None if p.scalar else x.shape for p, x in zip(m.inputs, inputs)]
        st = self._prepare(variant, m.sizes_of(shapes, sizes))
        torch, outs, given = self._torch, [], dict(zip((p.index for p in m.inputs), inputs))
        for a, p in zip(self._args, m.params):
            shape = st.shapes[p.index]
            if p.index in given:
                x = given[p.index]
                if p.scalar:
                    if isinstance(x, bool) or not isinstance(x, numbers.Real):
                        raise TypeError(f"{p.name}: a number expected ({p.type} scalar), {type(x).__name__} given")
                    if p.type[0] == "i":
                        if not isinstance(x, numbers.Integral):
                            raise TypeError(f"{p.name}: an integer expected ({p.type} scalar), {x!r} given")
                        a.i = int(x)
                    else:
                        a.f = float(x)
                    continue
                self._check_tensor(p, x, shape)
            else:
                x = torch.empty(shape, dtype=self._dtypes[p.type], device=self.device)
            if p.role != "input":
                outs.append(x)
            a.ptr = x.data_ptr()
        stream = self._stream()
        self._error(_lib.lib.fz_call(self._art, b"fused" if variant == "fused" else b"unfused", st.sizes, st.nsizes,
                                     self._args, len(m.params), st.scratch.data_ptr(), stream))
        return outs[0] if len(outs) == 1 else tuple(outs)
