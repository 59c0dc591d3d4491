"""Just enough of torch's interface for fuserun's tests on a machine without
torch or a GPU: tensors in the fake libcuda's memory (allocated through
libfuserun, FUSERUN_LIBCUDA pointing at build/rt/libfakecuda.so), dtypes,
devices, the current stream. Installed as sys.modules["torch"] by the test."""
import ctypes
import math

from fuserun import _lib


class dtype:
    def __init__(self, name, size):
        self.name, self.itemsize = name, size

    def __repr__(self):
        return "torch." + self.name


float64, float32, float16, bfloat16 = dtype("float64", 8), dtype("float32", 4), dtype("float16", 2), dtype("bfloat16", 2)
float8_e4m3fn, float8_e5m2 = dtype("float8_e4m3fn", 1), dtype("float8_e5m2", 1)
int64, int32, uint8 = dtype("int64", 8), dtype("int32", 4), dtype("uint8", 1)


class device(tuple):
    """(type, index), compared and hashed in C as torch's device is (a
    Python __eq__ would make a timing of fuserun's checks on the fake
    measure the fake's comparison instead)"""

    def __new__(cls, type_, index=None):
        if isinstance(type_, device):
            type_, index = type_.type, type_.index
        elif ":" in type_:
            type_, index = type_.split(":")[0], int(type_.split(":")[1])
        return tuple.__new__(cls, (type_, index))

    type = property(lambda self: self[0])
    index = property(lambda self: self[1])

    def __repr__(self):
        return f"device(type='{self.type}', index={self.index})"


_dev = ctypes.c_void_p()
_err = ctypes.create_string_buffer(_lib.ERRMSG_SIZE)
zeros_calls = 0
# freed tensors' memory by bytes, reused as torch's caching allocator does
# (a benchmark's many calls then stay within the fake's memory)
_pool = {}


def _open():
    if not _dev:
        _lib.check(_lib.lib.fz_device_open(0, ctypes.byref(_dev), _err), _err.value)


class Tensor:
    def __init__(self, shape, dtype_, dev, ptr=None, contiguous=True, base=None):
        self.shape, self.dtype, self.device, self._contig = tuple(shape), dtype_, dev, contiguous
        self._ptr, self._base, self._bytes = ptr, base, 0
        if ptr is None:
            _open()
            n = max(1, self.numel() * dtype_.itemsize)
            free = _pool.get(n)
            if free:
                self._ptr = free.pop()
            else:
                p = ctypes.c_ulonglong()
                _lib.check(_lib.lib.fz_alloc(_dev, n, ctypes.byref(p)), b"fz_alloc")
                self._ptr = p.value
            self._bytes = n

    def __del__(self):
        if self._bytes:
            _pool.setdefault(self._bytes, []).append(self._ptr)

    def numel(self):
        return math.prod(self.shape)

    def data_ptr(self):
        return self._ptr

    def is_contiguous(self):
        return self._contig

    def t(self):
        return Tensor(self.shape[::-1], self.dtype, self.device, self._ptr, contiguous=False, base=self)

    def expand(self, shape):
        """A view of a rank-0 tensor at a shape (what fuserun's allocators use), not contiguous unless one element"""
        assert self.shape == (), "the fake expands rank-0 tensors only"
        return Tensor(shape, self.dtype, self.device, self._ptr, contiguous=math.prod(shape) <= 1, base=self)

    def host_bytes(self):
        buf = ctypes.create_string_buffer(self.numel() * self.dtype.itemsize)
        _lib.check(_lib.lib.fz_copy_to_host(_dev, buf, self._ptr, len(buf), None), b"copy")
        return buf.raw


def empty(shape, dtype=float32, device=None):
    return Tensor(shape if isinstance(shape, tuple) else (shape,), dtype, device)


def empty_like(t):
    return Tensor(t.shape, t.dtype, t.device)


def zeros(n, dtype=float32, device=None):
    global zeros_calls
    zeros_calls += 1
    t = empty(n, dtype, device)
    _lib.check(_lib.lib.fz_memset(_dev, t._ptr, 0, max(1, t.numel() * dtype.itemsize), None), b"memset")
    return t


class _Stream:
    cuda_stream = 0  # the legacy default stream


class cuda:
    @staticmethod
    def current_device():
        return 0

    @staticmethod
    def current_stream(dev=None):
        return _Stream()
