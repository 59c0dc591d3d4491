"""libfuserun through ctypes: where it is found, and the prototypes used.

The library is, in order: $FUSERUN_LIB (a path), the clone's lib/ beside
this package (an editable or in-place use), libfuserun.so.0 on the loader's
path (an installed libfuserun, e.g. make install with its rpath or
LD_LIBRARY_PATH)."""
import ctypes
import os

ERRMSG_SIZE = 1024  # FZ_ERRMSG_SIZE
MAX_RANK = 4        # FZ_MAX_RANK
FORMAT_WITH_RECIPE = 2


class FuserunError(RuntimeError):
    """A libfuserun call failed: code is its FZ_ERR_* number, name its name."""

    def __init__(self, code, name, message):
        super().__init__(f"{name}: {message}" if message else name)
        self.code, self.name, self.message = code, name, message


class Arg(ctypes.Structure):
    """fz_arg: one argument of fz_call."""
    _fields_ = [("type", ctypes.c_char_p), ("scalar", ctypes.c_int), ("ptr", ctypes.c_ulonglong),
                ("f", ctypes.c_double), ("i", ctypes.c_longlong)]


def _candidates():
    env = os.environ.get("FUSERUN_LIB")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    clone = os.path.join(here, "..", "..", "lib", "libfuserun.so")
    return [clone, "libfuserun.so.0", "libfuserun.so"]


def _load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append(f"{path}: no such file")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
    raise ImportError("fuserun: cannot load libfuserun (set FUSERUN_LIB to its path, or build it with make): "
                      + "; ".join(errors))


lib = _load()

_vp, _int, _cp = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
_llp = ctypes.POINTER(ctypes.c_longlong)
_PROTOS = {
    "fz_strerror": (_cp, [_int]),
    "fz_device_open": (_int, [_int, ctypes.POINTER(_vp), _cp]),
    "fz_device_close": (None, [_vp]),
    "fz_device_error": (_cp, [_vp]),
    "fz_device_sync": (_int, [_vp]),
    "fz_artifact_load": (_int, [_vp, _cp, ctypes.POINTER(_vp)]),
    "fz_artifact_unload": (None, [_vp]),
    "fz_artifact_error": (_cp, [_vp]),
    "fz_artifact_get_info": (_vp, [_vp]),
    "fz_artifact_open_info": (_int, [_cp, ctypes.POINTER(_vp), _cp]),
    "fz_artifact_close_info": (None, [_vp]),
    "fz_tensor_shape": (_int, [_vp, _int, _llp, _llp, _llp, _cp]),
    "fz_call_scratch": (_int, [_vp, _cp, _llp, _int, ctypes.POINTER(ctypes.c_ulonglong)]),
    "fz_call": (_int, [_vp, _cp, _llp, _int, ctypes.POINTER(Arg), _int, ctypes.c_ulonglong, _vp]),
    "fz_call_prepare": (_int, [_vp, _cp, _llp, _int, ctypes.c_ulonglong, ctypes.POINTER(_vp)]),
    "fz_call_run": (_int, [_vp, ctypes.POINTER(Arg), _int, _vp]),
    "fz_call_release": (None, [_vp]),
    "fz_alloc": (_int, [_vp, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ulonglong)]),
    "fz_free": (_int, [_vp, ctypes.c_ulonglong]),
    "fz_copy_to_device": (_int, [_vp, ctypes.c_ulonglong, _vp, ctypes.c_size_t, _vp]),
    "fz_copy_to_host": (_int, [_vp, _vp, ctypes.c_ulonglong, ctypes.c_size_t, _vp]),
    "fz_memset": (_int, [_vp, ctypes.c_ulonglong, ctypes.c_ubyte, ctypes.c_size_t, _vp]),
}
for _name, (_res, _args) in _PROTOS.items():
    try:
        _f = getattr(lib, _name)
    except AttributeError:
        raise ImportError(f"fuserun: {lib._name} has no {_name}: a libfuserun older than this package") from None
    _f.restype, _f.argtypes = _res, _args

# fz_call_run again, for the specialised call (_fast.py): the prepared call
# and the argument array by address, as ints, so that ctypes converts four
# ints and nothing else (POINTER(Arg)'s check of the array and a c_void_p
# object's unwrapping cost a few tenths of a microsecond a call)
call_run_raw = ctypes.CFUNCTYPE(_int, _vp, _vp, _int, _vp)(("fz_call_run", lib))


def strerror(code):
    return lib.fz_strerror(code).decode()


def error(code, message):
    """A FuserunError of code (an FZ_ERR_* number) raised by the Python side."""
    return FuserunError(code, strerror(code), message)


def check(code, message):
    """Raises FuserunError for a nonzero code; message: bytes, str or None."""
    if code:
        if isinstance(message, bytes):
            message = message.decode(errors="replace")
        raise FuserunError(code, strerror(code), message or "")
