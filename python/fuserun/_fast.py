"""The call of one artifact, written for its parameters.

Why: issue 24's bar is the host's time per call, and a general call spends
most of it in Python's own work (loops over the parameters, a signature
built piece by piece, the outputs allocated in a comprehension). This writes
a `run` whose text names each input, output and argument of this artifact
once, with the artifact's constants (argument structs, dtypes, the device,
the launch function) in its globals.

A call is checked in two parts. What the manifest fixes whatever the sizes
(each tensor's dtype, its device, contiguity; each scalar's plain type) is
a guard of `is` and `==` tests against those constants, made on every call
and never stored. What the sizes decide (the shapes) is the key of the
plans: (variant, each tensor input's shape, out's type and its tensors'
shapes, the sizes given with their types) -> the call prepared and checked
in full once (slow(), which registers it: see key()). So a repeat call
builds one short tuple of shapes, hashes it and looks it up: no manifest
check, no dtype or device in the hash.

What goes into the text comes from counts and positions only (never a name
from the manifest), so a manifest cannot put code in it. A call that fails
the guard, has an unseen key, or is malformed in any way (a wrong count, a
non-tensor, an unhashable size) goes to slow(), which checks it in full,
launches, and raises the error a wrong call gets."""


def _guard_text(nin, tin, integral, nnew):
    """The guard as Python text (one expression): each tensor input's dtype
    (is, torch's dtypes are singletons), contiguity and device; each scalar
    input's type (an int for an integer scalar; an int or a float for a
    float one: bool and subclasses go to slow(), which checks them)."""
    terms = []
    for i in range(nin):
        if i in tin:
            terms.append(f"x{i}.dtype is d_in{i} and x{i}.is_contiguous() and x{i}.device == dev")
        elif integral[i]:
            terms.append(f"type(x{i}) is int")
        else:
            terms.append(f"(type(x{i}) is float or type(x{i}) is int)")
    return " and ".join(terms) or "True"


def _out_guard_text(nnew):
    return " and ".join(f"o{k}.dtype is d{k} and o{k}.is_contiguous() and o{k}.device == dev" for k in range(nnew)) or "True"


def _key_text(nin, tin, integral, nnew):
    """The plan's key as Python text, indented for run's try block; key is
    None when the guard fails (slow() then says what is wrong)."""
    xs = "".join(f"x{i}, " for i in range(nin)) or "() "
    os_ = "".join(f"o{k}, " for k in range(nnew)) or "() "
    shapes = "".join(f"x{i}.shape, " for i in range(nin) if i in tin)
    outs = "".join(f"o{k}.shape, " for k in range(nnew))
    return (f"{xs}= inputs\n"
            f"key = None\n"
            f"if {_guard_text(nin, tin, integral, nnew)}:\n"
            f"    if out is None:\n"
            f"        key = (variant, {shapes})\n"
            f"    else:\n"
            f"        {os_}= out\n"
            f"        if {_out_guard_text(nnew)}:\n"
            f"            key = (variant, {shapes}type(out), {outs})\n"
            f"    if sizes and key is not None:\n"
            f"        key = (key, tuple((k, type(v), v) for k, v in sizes.items()))\n")


def _alloc_text(k, like):
    """Output k: torch.empty_like of the tensor input like[k] where the
    manifest gives them one shape and element type (the guard says it is
    contiguous, on the device, of that dtype; the key, of that shape: so is
    its copy), which costs about half of torch.empty with a dtype and a
    device on an H200 (bench_overhead.py --parts); else the plan's
    allocator for it (Artifact._allocator: empty_like of a template of no
    memory where torch gives that a contiguous tensor)."""
    if like[k] is not None:
        return f"        o{k} = empty_like(x{like[k]})\n"
    return f"        o{k} = n[{k}]()\n"


def _run_text(nin, tin, integral, nnew, ret, like):
    """run(self, *inputs, variant, out, **sizes): the plan looked up, the
    pointers and scalars set, the outputs allocated, the launch."""
    sets = "".join(f"    a{i}.ptr = x{i}.data_ptr()\n" if i in tin else
                   f"    a{i}.{'i' if integral[i] else 'f'} = x{i}\n" for i in range(nin))
    allocs = "".join(_alloc_text(k, like) for k in range(nnew))
    outs = "".join(f"    b{k}.ptr = o{k}.data_ptr()\n" for k in range(nnew))
    got = [f"x{i}" if kind == "in" else f"o{i}" for kind, i in ret]
    value = got[0] if len(got) == 1 else "(" + ", ".join(got) + ",)"
    key = "".join("        " + line + "\n" for line in _key_text(nin, tin, integral, nnew).splitlines())
    return ("def run(self, *inputs, variant='fused', out=None, **sizes):\n"
            "    try:\n" + key +
            "        c = calls.get(key) if key is not None else None\n"
            "    except (AttributeError, TypeError, ValueError):  # checked in full, outside this handler\n"
            "        c = None\n"
            "    if c is None:\n"
            "        return slow(self, inputs, variant, out, sizes)\n" + sets +
            ("    if out is None:\n" + ("        n = c.alloc\n" if None in like else "") + allocs if nnew else "") + outs +
            "    rc = fz_run(c.handle_value, args_at, nargs, stream())\n"
            "    if rc:\n"
            "        self._error(rc)\n"
            f"    return {value}\n")


def _register_text(nin, tin, nnew):
    """key(inputs, variant, out, sizes): run's key for a call slow() checked
    in full (the guard holds for it: slow() refused it otherwise)."""
    xs = "".join(f"x{i}, " for i in range(nin)) or "() "
    os_ = "".join(f"o{k}, " for k in range(nnew)) or "() "
    shapes = "".join(f"x{i}.shape, " for i in range(nin) if i in tin)
    outs = "".join(f"o{k}.shape, " for k in range(nnew))
    return ("def key(inputs, variant, out, sizes):\n"
            f"    {xs}= inputs\n"
            f"    if out is None:\n"
            f"        key = (variant, {shapes})\n"
            f"    else:\n"
            f"        {os_}= out\n"
            f"        key = (variant, {shapes}type(out), {outs})\n"
            f"    if sizes:\n"
            f"        key = (key, tuple((k, type(v), v) for k, v in sizes.items()))\n"
            f"    return key\n")


def make(nin, tin, integral, nnew, ret, like, env):
    """(run, key): run as above; key(inputs, variant, out, sizes) its key,
    for slow() to register a call it checked. nin: the inputs; tin: the
    places of the tensor inputs; integral[i]: scalar input i is an integer
    type; nnew: the outputs a call allocates; ret: what a call returns,
    ("in", i) or ("new", k); like[k]: the tensor input output k is
    allocated like, or None. env: calls (key -> prepared call, whose
    handle_value is fz_call_run's first argument and alloc[k] output k's
    allocator), slow, empty_like, dev, stream, fz_run, args_at (the argument array's address), nargs, the
    argument structs A (of the inputs, in order) and B (of the outputs),
    the outputs' dtypes D, the tensor inputs' dtypes DIN (None for a
    scalar)."""
    names = dict(env)
    names.update({f"a{i}": a for i, a in enumerate(env["A"])})
    names.update({f"b{k}": b for k, b in enumerate(env["B"])})
    names.update({f"d{k}": d for k, d in enumerate(env["D"])})
    names.update({f"d_in{i}": d for i, d in enumerate(env["DIN"]) if d is not None})
    text = _run_text(nin, tin, integral, nnew, ret, like) + _register_text(nin, tin, nnew)
    scope = {}
    exec(compile(text, "<fuserun call>", "exec"), names, scope)  # noqa: S102 (text from counts alone)
    return scope["run"], scope["key"]
