"""What the Python side reads from a verified manifest: sizes, parameters
(name, role, element type, dimensions), listed files, the format.

libfuserun verifies the manifest (fz_artifact_open_info); this reads the
same bytes' size/param/temp/file lines, which are simple, rather than
mirroring fz_artifact_info's C layout in ctypes. Shapes at given sizes come
from fz_tensor_shape, so derived dimensions are computed as the runtime
and the generated code compute them."""
import ctypes
import hashlib
import os

from . import _lib

# manifest element types: (torch dtype name, NumPy dtype of the float64 reference's buffers)
TYPES = {"f64": ("float64", "float64"), "f32": ("float32", "float64"), "f16": ("float16", "float64"),
         "bf16": ("bfloat16", "float64"), "f8e4m3": ("float8_e4m3fn", "float64"),
         "f8e5m2": ("float8_e5m2", "float64"), "i64": ("int64", "int64"),
         "i32": ("int32", "int32")}


class Param:
    """A param or temp line: index is its place among the tensors (the args struct's order)."""

    def __init__(self, index, name, role, type_, dims):
        self.index, self.name, self.role, self.type, self.dims = index, name, role, type_, dims
        self.rank = len(dims)
        self.scalar = self.rank == 0 and role == "input"
        self.btype = type_.encode()

    def __repr__(self):
        return f"Param({self.name} {self.role} {self.type}[{','.join(self.dims)}])"


def resolve(path):
    """A manifest path, or a fusion name (generated/NAME.manifest), as fuserun takes them."""
    path = os.fspath(path)
    if os.sep not in path and not path.endswith(".manifest"):
        return os.path.join("generated", path + ".manifest")
    return path


class Manifest:
    def __init__(self, path):
        self.path = resolve(path)
        err = ctypes.create_string_buffer(_lib.ERRMSG_SIZE)
        info = ctypes.c_void_p()
        _lib.check(_lib.lib.fz_artifact_open_info(self.path.encode(), ctypes.byref(info), err), err.value)
        self._info = info
        with open(self.path, "rb") as f:
            text = f.read()
        body, _, last = text.rstrip(b"\n").rpartition(b"\nmanifest-sha256 ")
        if hashlib.sha256(body + b"\n").hexdigest().encode() != last:
            raise _lib.error(10, f"{self.path}: changed while it was read")
        self.sizes, self.tensors, self.files = [], [], {}
        self.fusion, self.format = None, 1
        for line in body.decode(errors="replace").split("\n"):
            t = line.split(" ")
            if t[0] == "fusec-artifact":
                self.format = int(t[1])
            elif t[0] == "fusion":
                self.fusion = t[1]
            elif t[0] == "size":
                self.sizes.append(t[1])
            elif t[0] in ("param", "temp"):
                dims = [] if t[4] == "-" else t[4].split(",")
                self.tensors.append(Param(len(self.tensors), t[1], t[2], t[3], dims))
            elif t[0] == "file":
                self.files[t[1]] = t[2]
        self.params = [p for p in self.tensors if p.role != "temp"]
        self.inputs = [p for p in self.params if p.role in ("input", "inout")]
        self.outputs = [p for p in self.params if p.role in ("output", "inout")]
        self._size_index = {s: i for i, s in enumerate(self.sizes)}
        self._shapes = {}

    def close(self):
        if getattr(self, "_info", None):
            _lib.lib.fz_artifact_close_info(self._info)
            self._info = None

    def __del__(self):
        self.close()

    def read_listed(self, name):
        """The bytes of a file the manifest lists, checked against its SHA-256."""
        with open(os.path.join(os.path.dirname(self.path), name), "rb") as f:
            data = f.read()
        if hashlib.sha256(data).hexdigest() != self.files.get(name):
            raise _lib.error(10, f"{name}: not the file the manifest lists (edited or truncated)")
        return data

    def sizes_of(self, shapes, given):
        """The sizes, in the manifest's order: given by name (keyword
        arguments), else read from the inputs' dimensions that are a size
        alone. shapes: one tuple per input (None for a scalar)."""
        values = [None] * len(self.sizes)
        for name, v in given.items():
            if name not in self._size_index:
                raise TypeError(f"{self.fusion} has no size {name} (its sizes: {', '.join(self.sizes)})")
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"size {name} = {v!r}: a positive integer expected")
            values[self._size_index[name]] = v
        for p, shape in zip(self.inputs, shapes):
            if shape is None:
                continue
            if len(shape) != p.rank:
                raise ValueError(f"{p.name}: {p.rank} dimensions [{','.join(p.dims)}] expected, shape {tuple(shape)} given")
            for d, n in zip(p.dims, shape):
                i = self._size_index.get(d)
                if i is not None and values[i] is None:
                    values[i] = int(n)
        missing = [s for s, v in zip(self.sizes, values) if v is None]
        if missing:
            raise TypeError(f"size {', '.join(missing)} of {self.fusion} is no input's dimension: give it, e.g. {missing[0]}=...")
        return tuple(values)

    def shapes_at(self, sizes):
        """Every tensor's shape at sizes (a tuple, cached)."""
        got = self._shapes.get(sizes)
        if got is None:
            arr = (ctypes.c_longlong * max(1, len(sizes)))(*sizes)
            dims = (ctypes.c_longlong * _lib.MAX_RANK)()
            n = ctypes.c_longlong()
            err = ctypes.create_string_buffer(_lib.ERRMSG_SIZE)
            got = []
            for p in self.tensors:
                _lib.check(_lib.lib.fz_tensor_shape(self._info, p.index, arr, dims, ctypes.byref(n), err), err.value)
                got.append(tuple(dims[d] for d in range(p.rank)))
            self._shapes[sizes] = got
        return got
