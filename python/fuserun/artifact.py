"""An artifact on a GPU, called on torch tensors through fz_call.

Each call checks its tensors against the manifest (element type, shape at
the sizes, contiguity, device), allocates the outputs with torch (or takes
them, out=), takes torch's current stream, and launches the variant from
the manifest's launch recipe, prepared once per variant and sizes
(fz_call_prepare; each call is fz_call_run): no generated code is compiled.
The scratch (the variant's temps and reduction workspace) is a torch uint8
tensor per variant and sizes, zeroed once and kept: calls of one artifact
at the same sizes must not overlap on different streams (they share it),
and one thread at a time calls an artifact (its argument array is shared)."""
import ctypes
import functools
import numbers
import sys

from . import _fast, _lib
from .manifest import TYPES, Manifest


def _torch():
    torch = sys.modules.get("torch")
    if torch is None:
        import torch  # noqa: F811 (only when a device-side artifact is made)
    return torch


class _Call:
    """What a call at one (variant, sizes) needs, computed once: the
    outputs' shapes, the scratch tensor, and the call prepared in
    libfuserun (fz_call_prepare: the recipe evaluated, the scratch placed)."""

    def __init__(self, sizes, shapes, scratch, handle, new, alloc):
        self.sizes, self.shapes, self.scratch, self.handle = sizes, shapes, scratch, handle
        self.handle_value = handle.value  # the handle as an int: ctypes passes it to a void * without a conversion object
        self.new = new  # (shape, dtype) of each output the call allocates (role output), in order
        self.alloc = alloc  # each of them: a call of no argument that returns a new contiguous tensor for it


class Artifact:
    """load(path): the artifact's PTX loaded on a CUDA device (torch's
    current one by default). Call it with the inputs (input and inout
    parameters, in the manifest's order; scalars as Python numbers):
    art(x, y, variant="unfused", N=...) returns the outputs (one tensor, or
    a tuple in the manifest's order; an inout parameter's tensor is updated
    in place and returned too). out=(t, ...): the output parameters'
    tensors (role output, in order), checked as the inputs are, written
    instead of allocated.

    The checks are made in full the first time a call's tensors have a
    signature (each tensor's shape, dtype, device and contiguity, the
    variant, the sizes given); a call whose signature was seen and passed
    skips to the launch, as every check would pass again. A tensor that
    differs in any of these is a new signature, checked in full."""

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
        self._cache, self._calls = {}, {}
        self._dev, self._art = ctypes.c_void_p(), ctypes.c_void_p()
        err = ctypes.create_string_buffer(_lib.ERRMSG_SIZE)
        _lib.check(_lib.lib.fz_device_open(index, ctypes.byref(self._dev), err), err.value)
        rc = _lib.lib.fz_artifact_load(self._dev, m.path.encode(), ctypes.byref(self._art))
        if rc:
            msg = _lib.lib.fz_device_error(self._dev)
            self.close()
            _lib.check(rc, msg)
        self._dtypes = {t: getattr(torch, TYPES[t][0]) for t in TYPES}
        self._nargs = len(m.params)
        self._args = (_lib.Arg * max(1, len(m.params)))()
        for a, p in zip(self._args, m.params):
            a.type, a.scalar = p.btype, int(p.scalar)
        # each argument's struct (kept: indexing the array makes a new one),
        # and where its value comes from: the i-th input, the k-th new output
        arg = dict(zip((p.index for p in m.params), self._args))
        pos = {p.index: i for i, p in enumerate(m.inputs)}
        self._nin = len(m.inputs)
        self._tin = tuple(i for i, p in enumerate(m.inputs) if not p.scalar)   # the tensor inputs' places
        self._in_args = tuple((arg[p.index], pos[p.index]) for p in m.inputs if not p.scalar)
        self._scalar_args = tuple((arg[p.index], pos[p.index], p, p.type[0] == "i") for p in m.inputs if p.scalar)
        self._new = tuple(p for p in m.params if p.role == "output")
        self._out_args = tuple(arg[p.index] for p in self._new)
        # what a call returns: ("in", i) an inout input, ("new", k) an output
        self._ret = tuple(("in", pos[p.index]) if p.role == "inout" else ("new", self._new.index(p)) for p in m.outputs)
        self._torch = torch
        # the current stream's handle: torch's raw getter where it has one
        # (a fraction of a microsecond), else the public call
        raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
        self._stream = functools.partial(raw, index) if raw else (lambda: torch.cuda.current_stream(self.device).cuda_stream)
        self._fz_run = _lib.lib.fz_call_run
        self._fz_run_raw = _lib.call_run_raw  # the same, every argument an int (_fast.py's run)
        self._specialise()

    def _specialise(self):
        """This artifact's own class, whose run (and __call__) is written for
        its parameters (_fast.py): a call reaches it with no call between
        (art(...) looks __call__ up on the class), and it is still an Artifact."""
        m = self.manifest
        tin = frozenset(self._tin)
        integral = [p.scalar and p.type[0] == "i" for p in m.inputs]
        arg = dict(zip((p.index for p in m.params), self._args))
        like = [next((i for i, q in enumerate(m.inputs) if not q.scalar and q.type == p.type and q.dims == p.dims), None)
                for p in self._new]
        env = {"calls": self._calls, "slow": Artifact._slow, "empty_like": self._torch.empty_like, "dev": self.device,
               "stream": self._stream, "fz_run": self._fz_run_raw, "args_at": ctypes.addressof(self._args), "nargs": self._nargs,
               "A": [arg[p.index] for p in m.inputs], "B": list(self._out_args), "D": [self._dtypes[p.type] for p in self._new],
               "DIN": [None if p.scalar else self._dtypes[p.type] for p in m.inputs]}
        run, self._key = _fast.make(len(m.inputs), tin, integral, len(self._new), self._ret, like, env)
        self.__class__ = type("Artifact", (Artifact,), {"run": run, "__call__": run, "__doc__": Artifact.__doc__})

    def close(self):
        """Unloads the artifact (also when collected); its scratch tensors go with it."""
        if not hasattr(self, "_calls"):  # __init__ failed before: nothing was made
            self._calls = {}
        for c in getattr(self, "_cache", {}).values():
            if c.handle:
                _lib.lib.fz_call_release(c.handle)
                c.handle = None
        self._cache = {}
        self._calls.clear()  # the dict the specialised run holds: a closed artifact's calls take the slow path
        if getattr(self, "_art", None):
            _lib.lib.fz_artifact_unload(self._art)
            self._art = None
        if getattr(self, "_dev", None):
            _lib.lib.fz_device_close(self._dev)
            self._dev = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _error(self, rc):
        _lib.check(rc, _lib.lib.fz_artifact_error(self._art))

    def _prepare(self, variant, sizes):
        """The _Call of (variant, sizes), made the first time: shapes, scratch, the prepared call."""
        key = (variant, sizes)
        got = self._cache.get(key)
        if got is None:
            shapes = self.manifest.shapes_at(sizes)
            arr = (ctypes.c_longlong * max(1, len(sizes)))(*sizes)
            n = ctypes.c_ulonglong()
            v = variant.encode()
            self._error(_lib.lib.fz_call_scratch(self._art, v, arr, len(sizes), ctypes.byref(n)))
            scratch = self._torch.zeros(n.value, dtype=self._torch.uint8, device=self.device)
            handle = ctypes.c_void_p()
            self._error(_lib.lib.fz_call_prepare(self._art, v, arr, len(sizes), scratch.data_ptr(), ctypes.byref(handle)))
            new = tuple((shapes[p.index], self._dtypes[p.type]) for p in self._new)
            alloc = tuple(self._allocator(shape, dt) for shape, dt in new)
            got = self._cache[key] = _Call(sizes, shapes, scratch, handle, new, alloc)
        return got

    def _allocator(self, shape, dtype):
        """A call that allocates an output of this shape and dtype: torch.empty_like
        of a template of no memory (a rank-0 tensor expanded to the shape),
        about 1.2 us less than torch.empty(shape, dtype=, device=) on an H200
        (bench_overhead.py --parts), where one tensor made so here is what the
        kernel needs (this shape, dtype and device, contiguous: empty_like gives
        an expanded tensor's copy contiguous strides); else torch.empty."""
        torch = self._torch
        plain = functools.partial(torch.empty, shape, dtype=dtype, device=self.device)
        try:
            base = torch.empty((), dtype=dtype, device=self.device)
            tmpl = base.expand(shape) if shape else base
            probe = torch.empty_like(tmpl)
            ok = (tuple(probe.shape) == tuple(shape) and probe.dtype == dtype and probe.device == self.device
                  and probe.is_contiguous())
        except (AttributeError, RuntimeError, TypeError):  # a torch without expand or empty_like: the plain call
            ok = False
        return functools.partial(torch.empty_like, tmpl) if ok else plain

    def _check_tensor(self, p, x, shape, what=""):
        if x.dtype != self._dtypes[p.type]:
            raise TypeError(f"{what}{p.name}: {self._dtypes[p.type]} ({p.type}) expected, {x.dtype} given")
        if x.shape != shape:
            raise ValueError(f"{what}{p.name}: shape {shape} ([{','.join(p.dims)}]) expected, {tuple(x.shape)} given")
        if x.device != self.device:
            raise ValueError(f"{what}{p.name}: on {self.device} expected, on {x.device} given")
        if not x.is_contiguous():
            raise ValueError(f"{what}{p.name}: a contiguous tensor expected (call .contiguous())")

    def _checked(self, inputs, variant, out, sizes):
        """Every check of a call's arguments but its scalars' (_scalar); its _Call."""
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
        if out is not None:
            if not isinstance(out, (tuple, list)) or len(out) != len(self._new):
                names = ", ".join(p.name for p in self._new)
                raise TypeError(f"out: a tuple of the {len(self._new)} output tensors ({names}) expected")
            for p, x in zip(self._new, out):
                if not hasattr(x, "data_ptr"):
                    raise TypeError(f"out {p.name}: a torch tensor expected, {type(x).__name__} given")
        shapes = [None if p.scalar else x.shape for p, x in zip(m.inputs, inputs)]
        c = self._prepare(variant, m.sizes_of(shapes, sizes))
        for p, x in zip(m.inputs, inputs):
            if not p.scalar:
                self._check_tensor(p, x, c.shapes[p.index])
        if out is not None:
            for p, x in zip(self._new, out):
                self._check_tensor(p, x, c.shapes[p.index], "out ")
        return c

    def _scalar(self, a, p, x):
        """A scalar argument of any type: checked, set."""
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise TypeError(f"{p.name}: a number expected ({p.type} scalar), {type(x).__name__} given")
        if p.type[0] == "i":
            if not isinstance(x, numbers.Integral):
                raise TypeError(f"{p.name}: an integer expected ({p.type} scalar), {x!r} given")
            a.i = int(x)
        else:
            a.f = float(x)

    def _slow(self, inputs, variant, out, sizes):
        """A call whose signature was not seen: checked in full, launched,
        and its signature registered for the specialised run when every
        scalar is a plain int or float (what it sets without a check)."""
        c = self._checked(inputs, variant, out, sizes)
        given, plain = out, True
        for a, i, p, integral in self._scalar_args:
            x = inputs[i]
            self._scalar(a, p, x)
            plain = plain and (type(x) is int or (type(x) is float and not integral))
        for a, i in self._in_args:
            a.ptr = inputs[i].data_ptr()
        if out is None:
            out = [new() for new in c.alloc]
        for a, x in zip(self._out_args, out):
            a.ptr = x.data_ptr()
        if plain:
            if len(self._calls) >= 4096:  # signatures without end (sizes that keep changing): start again
                self._calls.clear()
            self._calls[self._key(inputs, variant, given, sizes)] = c
        rc = self._fz_run(c.handle, self._args, self._nargs, self._stream())
        if rc:
            self._error(rc)
        got = tuple(inputs[i] if kind == "in" else out[i] for kind, i in self._ret)
        return got[0] if len(got) == 1 else got

    def run(self, *inputs, variant="fused", out=None, **sizes):
        """The call (see the class): each artifact's class replaces this
        with its specialised run (_fast.py), which does the same."""
        return self._slow(inputs, variant, out, sizes)

    __call__ = run
