"""The call of one artifact, written for its parameters.

Why: issue 24's bar is the host's time per call, and a general call spends
most of it in Python's own work (loops over the parameters, a signature
built piece by piece, the outputs allocated in a comprehension). This writes
a `run` whose text names each input, output and argument of this artifact
once: the signature is one tuple, each pointer one assignment, each output
one torch.empty, with the artifact's constants (argument structs, dtypes,
the launch function) in closure cells.

What goes into the text comes from counts and positions only (never a name
from the manifest), so a manifest cannot put code in it. A call whose
signature was not seen (or is malformed in any way: a wrong count, a
non-tensor, an unhashable size) goes to the general path, slow(), which
checks it in full, launches, and registers its signature (see key())."""


def _tensor_key(x):
    return f"{x}.shape, {x}.dtype, {x}.device, {x}.is_contiguous(), "


def _key_text(nin, tin, nnew):
    """The signature of (inputs, variant, out, sizes) as Python text: the
    variant, each tensor input's shape, dtype, device and contiguity, each
    scalar input's type, out's type and tensors, the sizes given with
    their types (N=64 and N=64.0 are equal as values)."""
    xs = "".join(f"x{i}, " for i in range(nin)) or "() "
    os_ = "".join(f"o{k}, " for k in range(nnew)) or "() "
    ins = "".join(_tensor_key(f"x{i}") if i in tin else f"type(x{i}), " for i in range(nin))
    outs = "".join(_tensor_key(f"o{k}") for k in range(nnew))
    return (f"    {xs}= inputs\n"
            f"    if out is None:\n"
            f"        key = (variant, {ins})\n"
            f"    else:\n"
            f"        {os_}= out\n"
            f"        key = (variant, {ins}type(out), {outs})\n"
            f"    if sizes:\n"
            f"        key = (key, tuple((k, type(v), v) for k, v in sizes.items()))\n")


def _alloc_text(k, like):
    """Output k: torch.empty_like of the tensor input like[k] where the
    manifest gives them one shape and element type (the signature says it
    is contiguous, on the device, of that shape: so is its copy), which
    costs about half of torch.empty with a dtype and a device on an H200
    (bench_overhead.py --parts); else torch.empty."""
    if like[k] is not None:
        return f"        o{k} = empty_like(x{like[k]})\n"
    return f"        o{k} = empty(s[{k}], dtype=d{k}, device=dev)\n"


def _run_text(nin, tin, integral, nnew, ret, like):
    """run(self, *inputs, variant, out, **sizes): the signature looked up,
    the pointers and scalars set, the outputs allocated, the launch."""
    sets = "".join(f"    a{i}.ptr = x{i}.data_ptr()\n" if i in tin else
                   f"    a{i}.{'i' if integral[i] else 'f'} = x{i}\n" for i in range(nin))
    allocs = "".join(_alloc_text(k, like) for k in range(nnew))
    outs = "".join(f"    b{k}.ptr = o{k}.data_ptr()\n" for k in range(nnew))
    got = [f"x{i}" if kind == "in" else f"o{i}" for kind, i in ret]
    value = got[0] if len(got) == 1 else "(" + ", ".join(got) + ",)"
    key = "".join("    " + line + "\n" for line in _key_text(nin, tin, nnew).splitlines())
    return ("def run(self, *inputs, variant='fused', out=None, **sizes):\n"
            "    try:\n" + key +
            "        c = calls.get(key)\n"
            "    except (AttributeError, TypeError, ValueError):  # checked in full, outside this handler\n"
            "        c = None\n"
            "    if c is None:\n"
            "        return slow(self, inputs, variant, out, sizes)\n" + sets +
            ("    if out is None:\n        s = c.new_shapes\n" + allocs if nnew else "") + outs +
            "    rc = fz_run(c.handle, args, nargs, stream())\n"
            "    if rc:\n"
            "        self._error(rc)\n"
            f"    return {value}\n")


def make(nin, tin, integral, nnew, ret, like, env):
    """(run, key): run as above; key(inputs, variant, out, sizes) the same
    signature, for slow() to register a call it checked. nin: the inputs;
    tin: the places of the tensor inputs; integral[i]: scalar input i is
    an integer type; nnew: the outputs a call allocates; ret: what a call
    returns, ("in", i) or ("new", k); like[k]: the tensor input output k
    is allocated like, or None. env: calls (signature -> prepared
    call), slow, empty, empty_like, dev, stream, fz_run, args, nargs, the argument
    structs A (of the inputs, in order) and B (of the outputs), the
    outputs' dtypes D."""
    names = dict(env)
    names.update({f"a{i}": a for i, a in enumerate(env["A"])})
    names.update({f"b{k}": b for k, b in enumerate(env["B"])})
    names.update({f"d{k}": d for k, d in enumerate(env["D"])})
    key = ("def key(inputs, variant, out, sizes):\n" + _key_text(nin, tin, nnew) + "    return key\n")
    text = _run_text(nin, tin, integral, nnew, ret, like) + key
    scope = {}
    exec(compile(text, "<fuserun call>", "exec"), names, scope)  # noqa: S102 (text from counts alone)
    return scope["run"], scope["key"]
