"""An artifact's float64 reference (NAME_ref.c) on NumPy arrays.

The reference is C that the artifact ships: it is compiled here once per
Reference with the system C compiler ($FUSERUN_CC, else $CC, else cc) from
copies checked against the verified manifest, as `fuserun validate` does,
and called through ctypes: float tensors as float64, integers as their own
type, rank-0 inputs by value, then the sizes."""
import ctypes
import os
import shutil
import subprocess
import tempfile

from . import _lib
from .manifest import TYPES, Manifest


class Reference:
    def __init__(self, path):
        import numpy  # only the reference needs it
        self._np = numpy
        self.manifest = m = Manifest(path)
        fields = []
        for p in m.params:
            if p.scalar:
                fields.append(("t_" + p.name, ctypes.c_double if p.type[0] in "fb" else ctypes.c_int64))
            else:
                fields.append(("t_" + p.name, ctypes.c_void_p))
        fields += [("n_" + s, ctypes.c_longlong) for s in m.sizes]
        self._struct = type("fz_%s_ref_args" % m.fusion, (ctypes.Structure,), {"_fields_": fields})
        self._lib = self._compile()
        self._fn = getattr(self._lib, "fz_%s_reference" % m.fusion)
        self._fn.restype, self._fn.argtypes = ctypes.c_int, [ctypes.POINTER(self._struct)]

    def _compile(self):
        m = self.manifest
        cc = os.environ.get("FUSERUN_CC") or os.environ.get("CC") or "cc"
        tmp = tempfile.mkdtemp(prefix="fuserun-py-")
        try:
            for name in (m.fusion + ".h", m.fusion + "_ref.c"):
                with open(os.path.join(tmp, name), "wb") as f:
                    f.write(m.read_listed(name))
            so = os.path.join(tmp, "ref.so")
            cmd = [cc, "-std=c11", "-O2", "-fPIC", "-shared", "-w", "-DFZ_NO_FUSERUN_H", "-I" + tmp,
                   os.path.join(tmp, m.fusion + "_ref.c"), "-lm", "-o", so]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True)
            except OSError as e:
                raise RuntimeError(f"fuserun: no C compiler: cannot run '{cc}': {e}") from None
            if r.returncode:
                raise RuntimeError(f"fuserun: compiling {m.fusion}_ref.c failed:\n{r.stderr}")
            lib = ctypes.CDLL(so)
            self._check_shapes(lib)
            return lib
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _check_shapes(self, lib):
        """The shapes the reference was written for (its fz_NAME_ref_shapes)
        against the manifest's, as fuserun checks them (fr_spec_check_shapes):
        a manifest re-hashed with another shape, and its header edited to
        match, must not get arrays sized for a reference that reads others."""
        m = self.manifest
        n = len(m.tensors)
        try:  # one row past the manifest's count is already wrong; the table ends with {0, 0}
            tab = ((ctypes.c_char_p * 2) * (n + 2)).in_dll(lib, f"fz_{m.fusion}_ref_shapes")
        except ValueError:
            raise RuntimeError(f"fuserun: {m.fusion}_ref.c has no fz_{m.fusion}_ref_shapes table: "
                               "an artifact older than fusec's shape checks") from None
        got = {}
        for row in tab:
            if row[0] is None:
                break
            got[row[0].decode()] = row[1].decode() if row[1] is not None else "(none)"
        for t in m.tensors:
            want = ",".join(t.dims) or "-"
            if got.get(t.name) != want:
                raise RuntimeError(f"fuserun: {m.fusion}: the reference reads {'temp' if t.role == 'temp' else 'param'} "
                                   f"{t.name} with shape {got.get(t.name, '(not in its table)')}, the manifest's is "
                                   f"{want}: header and manifest disagree")
        if len(got) != n:
            raise RuntimeError(f"fuserun: {m.fusion}: the reference's shape table has {'more' if len(got) > n else 'fewer'} "
                               f"rows than the manifest's {n} params and temps: header and manifest disagree")

    def __call__(self, *inputs, **sizes):
        """The outputs (float64, or the integer type), one array or a tuple
        in the manifest's order; inputs as Artifact takes them, NumPy arrays
        (any dtype converted) and numbers; sizes by name where no input's
        dimension gives them."""
        np, m = self._np, self.manifest
        if len(inputs) != len(m.inputs):
            raise TypeError(f"{m.fusion} takes {len(m.inputs)} inputs, given {len(inputs)}")
        shapes = [None if p.scalar else np.shape(x) for p, x in zip(m.inputs, inputs)]
        sz = m.sizes_of(shapes, sizes)
        want = m.shapes_at(sz)
        given = dict(zip((p.index for p in m.inputs), inputs))
        a, keep, outs = self._struct(), [], []
        for p in m.params:
            if p.scalar:
                setattr(a, "t_" + p.name, given[p.index])
                continue
            dtype = TYPES[p.type][1]
            if p.index in given:
                x = np.array(given[p.index], dtype=dtype, order="C", copy=True)
                if x.shape != want[p.index]:
                    raise ValueError(f"{p.name}: shape {want[p.index]} expected, {x.shape} given")
            else:
                x = np.zeros(want[p.index], dtype=dtype)
            if p.role != "input":
                outs.append(x)
            keep.append(x)
            setattr(a, "t_" + p.name, x.ctypes.data if x.size else None)
        for s, v in zip(m.sizes, sz):
            setattr(a, "n_" + s, v)
        rc = self._fn(ctypes.byref(a))
        if rc:
            raise ValueError(f"the reference of {m.fusion} refused the inputs: "
                             + {1: "a subscript out of range (a bad gather)", 2: "out of memory",
                                3: "sizes below what an input's domain reaches (the manifest's fits lines)"}.get(rc, f"code {rc}"))
        return outs[0] if len(outs) == 1 else tuple(outs)
