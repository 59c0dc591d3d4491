"""fuserun's tests without a GPU: the fake libcuda (FUSERUN_LIBCUDA), a fake
torch (fake_torch.py) whose tensors live in its memory, NumPy for the
reference when it is installed. Prints PASS/FAIL/SKIP lines and
"python: P passed, F failed, S skipped". Run by python/tests/run.sh."""
import ctypes
import hashlib
import math
import os
import shutil
import struct
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
GEN = os.environ.get("FUSERUN_GENERATED", "generated")
counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}


def report(kind, name, why=""):
    counts[kind] += 1
    print(f"{kind} {name}{': ' + why if why else ''}")


def check(name, cond, why=""):
    report("PASS" if cond else "FAIL", name, "" if cond else why)


def raises(name, exc, words, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        missing = [w for w in words if w not in str(e)]
        return check(name, not missing, f"{type(e).__name__}: {e} (lacks {missing})")
    except Exception as e:  # noqa: BLE001 (the wrong kind is a failure)
        return check(name, False, f"{type(e).__name__}: {e}, not {exc.__name__}")
    check(name, False, "no exception")


import fake_torch  # noqa: E402
sys.modules["torch"] = fake_torch
import fuserun  # noqa: E402
from fuserun import _lib  # noqa: E402

fake = ctypes.CDLL(os.environ["FUSERUN_LIBCUDA"])
fake.fakecuda_log_line.restype = ctypes.c_char_p
fake.fakecuda_last_args.restype = ctypes.c_void_p
fake.fakecuda_last_args.argtypes = [ctypes.POINTER(ctypes.c_size_t)]


def launches():
    return [fake.fakecuda_log_line(i).decode() for i in range(fake.fakecuda_log_count())]


def last_args():
    n = ctypes.c_size_t()
    p = fake.fakecuda_last_args(ctypes.byref(n))
    return ctypes.string_at(p, n.value)


def u64(b, i):
    return struct.unpack_from("<Q", b, 8 * i)[0]


T = fake_torch
dev = T.device("cuda", 0)

# kl_divergence: q, p f32[N] -> kl f32
m = fuserun.Manifest(os.path.join(GEN, "kl_divergence.manifest"))
check("the manifest's inputs and outputs", [p.name for p in m.inputs] == ["q", "p"] and [p.name for p in m.outputs] == ["kl"],
      repr(m.tensors))
raises("a size no input gives must be given by name", TypeError, ["size N", "N=..."], m.sizes_of, [None, None], {})
art = fuserun.load(os.path.join(GEN, "kl_divergence.manifest"))
q, p = T.empty((1000,), T.float32, dev), T.empty((1000,), T.float32, dev)
fake.fakecuda_log_start()
kl = art(q, p)
log, args = launches(), last_args()
check("kl_divergence fused: one tensor back, shape (), f32, on the device",
      isinstance(kl, T.Tensor) and kl.shape == () and kl.dtype is T.float32 and kl.device == dev, repr(kl))
check("kl_divergence fused: one launch of kl_divergence_f0", len(log) == 1 and log[0].startswith("launch kl_divergence_f0 "), repr(log))
check("kl_divergence fused: the args struct holds q, p, kl, the temp on chip, N = 1000",
      [u64(args, i) for i in range(5)] == [q.data_ptr(), p.data_ptr(), kl.data_ptr(), 0, 1000], repr([hex(u64(args, i)) for i in range(5)]))
zeros_before = T.zeros_calls
fake.fakecuda_log_start()
art(q, p, variant="unfused")
art(q, p, variant="unfused")
log = launches()
check("kl_divergence unfused: two launches a call", [l.split()[1] for l in log] == ["kl_divergence_u0", "kl_divergence_u1"] * 2, repr(log))
check("the scratch is allocated once per variant and sizes", T.zeros_calls == zeros_before + 1, f"{T.zeros_calls - zeros_before} allocations")
check("the unfused temp t is placed in the scratch", u64(last_args(), 3) != 0, "t is 0")
raises("a tensor of another dtype", TypeError, ["q: torch.float32 (f32) expected, torch.float64 given"], art,
       T.empty((1000,), T.float64, dev), p)
raises("a tensor of another shape", ValueError, ["p: shape (1000,) ([N]) expected, (1001,) given"], art, q, T.empty((1001,), T.float32, dev))
raises("a size given that disagrees with the shapes", ValueError, ["q: shape (999,)"], art, q, p, N=999)
raises("an unknown size", TypeError, ["has no size Q"], art, q, p, Q=3)
# fp8 (issue 25): e4m3 and e5m2 bytes are torch's two float8 dtypes, not interchangeable
f8 = fuserun.load(os.path.join(GEN, "matmul_bias_relu_fp8.manifest"))
check("f8e5m2 is torch.float8_e5m2, f8e4m3 torch.float8_e4m3fn",
      f8._dtypes["f8e5m2"] is T.float8_e5m2 and f8._dtypes["f8e4m3"] is T.float8_e4m3fn, repr(f8._dtypes))
raises("an e5m2 tensor where the manifest says f8e4m3", TypeError, ["B: torch.float8_e4m3fn (f8e4m3) expected, torch.float8_e5m2 given"],
       f8, T.empty((8, 16), T.float8_e4m3fn, dev), T.empty((24, 16), T.float8_e5m2, dev), 1.0, 1.0, T.empty((24,), T.bfloat16, dev))
f8.close()
raises("a tensor on another device", ValueError, ["q: on device(type='cuda', index=0) expected"], art,
       T.empty((1000,), T.float32, T.device("cpu")), p)
raises("the number of inputs", TypeError, ["takes 2 inputs (q, p), given 1"], art, q)
raises("a variant that is neither", ValueError, ["variant 'fastest'"], art, q, p, variant="fastest")
raises("not a tensor", TypeError, ["p: a torch tensor expected, list given"], art, q, [1.0] * 1000)

# softmax: sizes from a 2-D input, a non-contiguous view refused
sm = fuserun.load("softmax") if os.path.exists("generated/softmax.manifest") else fuserun.load(os.path.join(GEN, "softmax.manifest"))
X = T.empty((37, 1001), T.float32, dev)
fake.fakecuda_log_start()
Y = sm(X)
log = launches()
check("softmax: sizes R, C from X's shape; Y [R,C]", Y.shape == (37, 1001) and len(log) == 1 and "softmax_f0" in log[0], repr((Y.shape, log)))
raises("a non-contiguous tensor", ValueError, ["contiguous"], sm, T.empty((1001, 37), T.float32, dev).t())
raises("a 1-D tensor for a 2-D parameter", ValueError, ["X: 2 dimensions [R,C] expected"], sm, T.empty((5,), T.float32, dev))

# gemv_axpby_sum: scalars by value, two outputs
g = fuserun.load(os.path.join(GEN, "gemv_axpby_sum.manifest"))
A, x, z = T.empty((64, 32), T.float32, dev), T.empty((32,), T.float32, dev), T.empty((64,), T.float32, dev)
y, s = g(A, x, z, 0.5, 2)
args = last_args()
names = [p.name for p in g.manifest.tensors]
check("gemv_axpby_sum: two outputs, y [M] and s", y.shape == (64,) and s.shape == (), repr((y.shape, s.shape)))
check("gemv_axpby_sum: alpha and beta by value as doubles",
      struct.unpack_from("<d", args, 8 * names.index("alpha"))[0] == 0.5 and struct.unpack_from("<d", args, 8 * names.index("beta"))[0] == 2.0,
      repr(names))
raises("a scalar that is no number", TypeError, ["alpha: a number expected (f32 scalar), str given"], g, A, x, z, "0.5", 2.0)

# the cached path: after a call has passed its checks, a call whose tensors
# differ in one thing only (dtype, shape, device, contiguity) is refused all
# the same, and so are wrong out= tensors and scalars
fake.fakecuda_log_start()
for _ in range(3):
    y, s = g(A, x, z, 0.5, 2)
check("the cached path launches each call", len(launches()) == 3, repr(launches()))
check("the cached path: the args struct holds this call's tensors", u64(last_args(), names.index("y")) == y.data_ptr()
      and u64(last_args(), names.index("s")) == s.data_ptr() and u64(last_args(), names.index("A")) == A.data_ptr(), "stale pointers")
raises("cached, then a tensor of another dtype", TypeError, ["x: torch.float32 (f32) expected, torch.float64 given"], g,
       A, T.empty((32,), T.float64, dev), z, 0.5, 2)
raises("cached, then a tensor of another shape", ValueError, ["z: shape (64,) ([M]) expected, (65,) given"], g,
       A, x, T.empty((65,), T.float32, dev), 0.5, 2)
raises("cached, then a tensor on another device", ValueError, ["A: on device(type='cuda', index=0) expected"], g,
       T.empty((64, 32), T.float32, T.device("cuda", 1)), x, z, 0.5, 2)
raises("cached, then a non-contiguous tensor", ValueError, ["A: a contiguous tensor expected"], g,
       T.Tensor((64, 32), T.float32, dev, A.data_ptr(), contiguous=False), x, z, 0.5, 2)
raises("cached, then a scalar that is no number", TypeError, ["beta: a number expected (f32 scalar), str given"], g, A, x, z, 0.5, "2")
raises("cached, then a bool for a scalar", TypeError, ["alpha: a number expected (f32 scalar), bool given"], g, A, x, z, True, 2)
raises("cached, then not a tensor", TypeError, ["x: a torch tensor expected, list given"], g, A, [0.0] * 32, z, 0.5, 2)
raises("cached, then a size that disagrees", ValueError, ["A: shape (65, 32)"], g, A, x, z, 0.5, 2, M=65)
raises("cached, then another variant name", ValueError, ["variant 'fast'"], g, A, x, z, 0.5, 2, variant="fast")
g(A, x, z, 0.5, 2, M=64)
raises("cached with M=64, then M=64.0", ValueError, ["size M = 64.0: a positive integer expected"], g, A, x, z, 0.5, 2, M=64.0)
q1, p1 = T.empty((1,), T.float32, dev), T.empty((1,), T.float32, dev)
art(q1, p1, N=1)
raises("cached with N=1, then N=True", ValueError, ["size N = True: a positive integer expected"], art, q1, p1, N=True)
y2, s2 = T.empty((64,), T.float32, dev), T.empty((), T.float32, dev)
fake.fakecuda_log_start()
got = g(A, x, z, 0.5, 2, out=(y2, s2))
got = g(A, x, z, 0.5, 2, out=(y2, s2))
check("out=: the given tensors written and returned", got[0] is y2 and got[1] is s2 and len(launches()) == 2
      and u64(last_args(), names.index("y")) == y2.data_ptr() and u64(last_args(), names.index("s")) == s2.data_ptr(), repr(got))
raises("cached out=, then an output of another dtype", TypeError, ["out y: torch.float32 (f32) expected, torch.float16 given"], g,
       A, x, z, 0.5, 2, out=(T.empty((64,), T.float16, dev), s2))
raises("cached out=, then an output of another shape", ValueError, ["out s: shape () ([]) expected, (1,) given"], g,
       A, x, z, 0.5, 2, out=(y2, T.empty((1,), T.float32, dev)))
raises("cached out=, then an output on another device", ValueError, ["out y: on device(type='cuda', index=0) expected"], g,
       A, x, z, 0.5, 2, out=(T.empty((64,), T.float32, T.device("cpu")), s2))
raises("cached out=, then a non-contiguous output", ValueError, ["out y: a contiguous tensor expected"], g,
       A, x, z, 0.5, 2, out=(T.Tensor((64,), T.float32, dev, y2.data_ptr(), contiguous=False), s2))
raises("out= of the wrong count", TypeError, ["out: a tuple of the 2 output tensors (y, s)"], g, A, x, z, 0.5, 2, out=(y2,))
A2, x2 = T.empty((16, 8), T.float32, dev), T.empty((8,), T.float32, dev)
y3, s3 = g(A2, x2, T.empty((16,), T.float32, dev), 1.0, 0.0)
check("a new signature at other sizes: checked, prepared, its own shapes", y3.shape == (16,) and u64(last_args(), len(names)) == 16
      and u64(last_args(), len(names) + 1) == 8, repr((y3.shape, u64(last_args(), len(names)))))

# the specialised call (_fast.py): still an Artifact; an integer scalar set
# on the cached path; a scalar of another type always checked; a refusal
# after a cached call raised on its own (no KeyError chained to it)
check("an artifact's call is its specialised run, and it is an Artifact", isinstance(g, fuserun.Artifact)
      and type(g).__call__ is type(g).run and type(g).run is not fuserun.Artifact.run, repr(type(g)))
te = fuserun.load(os.path.join(GEN, "transfer_entropy_shard.manifest"))
te_names = [p.name for p in te.manifest.tensors]
vm, vn = [T.empty((8,), T.float32, dev) for _ in range(3)], [T.empty((5,), T.float32, dev) for _ in range(3)]
for off in (3, 4, -7):
    te(*vm, *vn, off)
    got = struct.unpack_from("<q", last_args(), 8 * te_names.index("off"))[0]
    if got != off:
        break
check("an i64 scalar by value, on the checked and the cached path", got == off, f"{got} for {off}")
raises("cached, then a float for an i64 scalar", TypeError, ["off: an integer expected (i64 scalar), 4.0 given"], te, *vm, *vn, 4.0)
raises("cached, then a bool for an i64 scalar", TypeError, ["off: a number expected (i64 scalar), bool given"], te, *vm, *vn, False)


class Half(float):
    pass


for v in (0.25, 0.75):
    g(A, x, z, Half(v), 2)
    got = struct.unpack_from("<d", last_args(), 8 * names.index("alpha"))[0]
    if got != v:
        break
check("a float subclass for a scalar: set at each call (the guard sends it to the checked path)", got == v, f"{got} for {v}")

# the plans' cache (_fast.py): the guard (dtype, contiguity, device, scalar
# types) on every call, the key (the shapes) to the plan checked in full
ga, gx, gz = T.empty((48, 24), T.float32, dev), T.empty((24,), T.float32, dev), T.empty((48,), T.float32, dev)
g(ga, gx, gz, 0.5, 2.0)
before = len(g._calls)
g(ga, gx, gz, 0.5, 2.0)
g(A, x, z, 0.5, 2.0)
g(ga, gx, gz, 0.5, 2.0)
check("cache: sizes met before are looked up, not checked anew", len(g._calls) == before, f"{len(g._calls)} plans, {before} before")
raises("cache: other shapes after cached ones, checked anew and refused when they disagree", ValueError,
       ["z: shape (48,) ([M]) expected, (64,) given"], g, ga, gx, z, 0.5, 2.0)
raises("cache: the cached shapes, one tensor's dtype changed", TypeError, ["A: torch.float32 (f32) expected, torch.float16 given"],
       g, T.empty((48, 24), T.float16, dev), gx, gz, 0.5, 2.0)
raises("cache: the cached shapes and dtypes, the other device", ValueError, ["z: on device(type='cuda', index=0) expected"],
       g, ga, gx, T.empty((48,), T.float32, T.device("cuda", 1)), 0.5, 2.0)
y4, s4 = g(ga, gx, gz, 3, 2.0)
check("cache: an int for a float scalar on the cached path, set as a double",
      struct.unpack_from("<d", last_args(), 8 * names.index("alpha"))[0] == 3.0 and y4.shape == (48,), repr(y4.shape))
raises("cache: out= as one tensor of the outputs' count of rows (iterable, not a tuple)", TypeError, ["out: a tuple of the 2"],
       g, A, x, z, 0.5, 2.0, out=T.empty((2, 64), T.float32, dev))
raises("cache: out= with the outputs in the wrong order", ValueError, ["out y: shape (64,)"], g, A, x, z, 0.5, 2.0, out=(s2, y2))
plan = next(c for c in g._cache.values() if c.sizes == (64, 32) and c.handle)
fresh = plan.alloc[1]()
check("a rank-0 output's allocator: a contiguous f32 tensor of shape () on the device",
      fresh.shape == () and fresh.dtype is T.float32 and fresh.device == dev and fresh.is_contiguous(), repr(fresh.shape))
k0 = art(q, p)
check("kl_divergence's rank-0 output through its plan's allocator: shape (), f32, contiguous",
      k0.shape == () and k0.dtype is T.float32 and k0.is_contiguous() and u64(last_args(), 2) == k0.data_ptr(), repr(k0.shape))
try:
    g(A, x, z, 0.5, 2)
    g(A, x, T.empty((64,), T.float16, dev), 0.5, 2)
    check("cached, then refused: no exception chained", False, "no exception")
except TypeError as e:
    check("cached, then refused: no exception chained", e.__context__ is None and e.__cause__ is None, repr(e.__context__))
fusec = os.environ.get("FUSEC", "bin/fusec")
if not os.access(fusec, os.X_OK):
    report("SKIP", "inout parameters returned as given", f"no {fusec}")
else:
    tmp = tempfile.mkdtemp(prefix="fuserun-test-")
    try:
        import subprocess
        subprocess.run([fusec, "tests/ref/lang/sgd_inplace.fuse", "-o", tmp], check=True, capture_output=True)
        sgd = fuserun.load(os.path.join(tmp, "sgd_inplace.manifest"))
        w, gr, mom, k = T.empty((9,), T.float32, dev), T.empty((9,), T.float32, dev), T.empty((9,), T.float32, dev), T.empty((9,), T.int32, dev)
        ok = True
        for _ in range(2):  # checked, then cached
            got = sgd(w, gr, mom, 0.01, 0.9, k)
            ok = ok and len(got) == 3 and got[0] is w and got[1] is mom and got[2].shape == (9,) and \
                u64(last_args(), 6) == got[2].data_ptr() and u64(last_args(), 0) == w.data_ptr()
        check("inout parameters returned as given (w, mom), the output allocated (cnt)", ok, repr(got))
        sgd.close()
    finally:
        shutil.rmtree(tmp)
te.close()
raises("closed, then a signature that was cached", ValueError, ["the artifact is closed"], te, *vm, *vn, 3)

# a format-1 artifact (no recipe) is refused at load, naming why
tmp = tempfile.mkdtemp(prefix="fuserun-test-")
try:
    for f in os.listdir(GEN):
        if f.startswith("relu.") or f == "relu_ref.c":
            shutil.copy(os.path.join(GEN, f), tmp)
    path = os.path.join(tmp, "relu.manifest")
    text = open(path, "rb").read().replace(b"fusec-artifact 2\n", b"fusec-artifact 1\n", 1)
    body = text[:text.rindex(b"manifest-sha256 ")]
    open(path, "wb").write(body + b"manifest-sha256 " + hashlib.sha256(body).hexdigest().encode() + b"\n")
    raises("a format-1 artifact: no launch recipe", fuserun.FuserunError, ["format 1 has no launch recipe", "regenerate"], fuserun.load, path)
    with open(os.path.join(tmp, "relu_ref.c"), "ab") as f:
        f.write(b"/* edited */\n")
    raises("an artifact whose files were edited", fuserun.FuserunError, ["relu_ref.c", "differs from the manifest's"], fuserun.Manifest, path)
finally:
    shutil.rmtree(tmp)

# the float64 reference on NumPy arrays
try:
    import numpy as np
except ImportError:
    np = None
if np is None:
    for n in ("relu", "softmax", "kl_divergence", "gemv_axpby_sum"):
        report("SKIP", f"reference {n} on NumPy arrays", "numpy is not installed (python3-numpy)")
else:
    rng = np.random.default_rng(3)
    r = fuserun.reference(os.path.join(GEN, "relu.manifest"))
    xs = rng.standard_normal(1000).astype(np.float32)
    check("reference relu on NumPy arrays", np.array_equal(r(xs), np.maximum(xs.astype(np.float64), 0)), "differs")
    r = fuserun.reference(os.path.join(GEN, "softmax.manifest"))
    Xs = rng.standard_normal((7, 33))
    e = np.exp(Xs - Xs.max(axis=1, keepdims=True))
    check("reference softmax on NumPy arrays", np.allclose(r(Xs), e / e.sum(axis=1, keepdims=True), rtol=1e-12, atol=0), "differs")
    r = fuserun.reference(os.path.join(GEN, "kl_divergence.manifest"))
    qs, ps = rng.uniform(0.1, 1, 500), rng.uniform(0.1, 1, 500)
    got = r(qs, ps)
    check("reference kl_divergence: a rank-0 output", got.shape == () and math.isclose(float(got), float(np.sum(qs * (np.log(qs) - np.log(ps)))),
                                                                                       rel_tol=1e-12), repr(got))
    r = fuserun.reference(os.path.join(GEN, "gemv_axpby_sum.manifest"))
    As, xv, zv = rng.standard_normal((6, 5)), rng.standard_normal(5), rng.standard_normal(6)
    yv, sv = r(As, xv, zv, 0.5, 2.0)
    check("reference gemv_axpby_sum: scalars and two outputs", np.allclose(yv, 0.5 * As @ xv + 2.0 * zv) and np.isclose(sv, yv.sum()), "differs")
    # a reference written for other shapes than its manifest's (the file's
    # hash and the manifest's re-made to match) is refused before any array
    tmp = tempfile.mkdtemp(prefix="fuserun-test-")
    try:
        for f in os.listdir(GEN):
            if f.startswith("relu.") or f == "relu_ref.c":
                shutil.copy(os.path.join(GEN, f), tmp)
        ref = os.path.join(tmp, "relu_ref.c")
        old = open(ref, "rb").read()
        new = old.replace(b'{"y", "N"}', b'{"y", "N,N"}', 1)
        open(ref, "wb").write(new)
        path = os.path.join(tmp, "relu.manifest")
        text = open(path, "rb").read().replace(hashlib.sha256(old).hexdigest().encode(), hashlib.sha256(new).hexdigest().encode(), 1)
        body = text[:text.rindex(b"manifest-sha256 ")]
        open(path, "wb").write(body + b"manifest-sha256 " + hashlib.sha256(body).hexdigest().encode() + b"\n")
        check("a reference edited to other shapes: the edit took", new != old and b'{"y", "N,N"}' in new, "relu_ref.c's table")
        raises("a reference written for other shapes than the manifest's", RuntimeError,
               ["the reference reads param y with shape N,N", "the manifest's is N"], fuserun.reference, path)
    finally:
        shutil.rmtree(tmp)

# real torch, when installed: fuserun's dtypes are torch's
try:
    import importlib
    del sys.modules["torch"]
    real = importlib.import_module("torch")
except ImportError:
    real = None
if real is None:
    report("SKIP", "fuserun's element types are real torch dtypes", "torch is not installed")
else:
    from fuserun.manifest import TYPES
    check("fuserun's element types are real torch dtypes", all(isinstance(getattr(real, v[0], None), real.dtype) for v in TYPES.values()))

for a in (art, sm, g):
    a.close()
print(f"python: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
sys.exit(1 if counts["FAIL"] else 0)
