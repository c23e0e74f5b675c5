"""A loop split over programs whose partial results meet in a workspace; the last slice to arrive runs the rest.

A split loop (a reduction over a long axis, the K loop of a matrix product) leaves each program with a partial
accumulator. Atomics straight into the output combine a sum whose result is stored as it is, but not a standard
deviation, a normalisation pass or a matmul epilogue. Here every slice adds its partials into a zeroed fp32 (or
the accumulator's integer) workspace with relaxed atomics, waits on a block barrier, and counts itself in on a
per-output arrival counter (an acquire-release atomic). The slice that arrives last reads the totals back from L2
(`.cg`: the atomics landed there, the SM's L1 may hold stale lines) and runs the rest of the kernel exactly as
the user wrote it. With one slice (`tl.num_programs(axis) == 1`, a grid that already fills the device) nothing
goes through the workspace and the wrapper allocates none.

The arrival order needs the barrier before the counter (each thread's partial is added before the program
counts itself in) and the counter's release/acquire pair: the pattern of split-K fixups in CUTLASS. Triton's CPU
interpreter runs the programs one after another, so it checks the arithmetic, not the ordering; the ordering is
CUDA's. On Ascend, where no device here can check cross-core ordering, the schedules do not emit it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..kernel_patterns import assigned_names
from ..recipe_kit import Decline, KernelSource
from ..source_edit import reindent
from .emit import free_names

ATOMIC = {"sum": "atomic_add", "max": "atomic_max", "min": "atomic_min"}  # how partials of each op combine
_TORCH_FILL = {"sum": "zeros", "max": "full", "min": "full"}
_FILL_VALUE = {"max": 'float("-inf")', "min": 'float("inf")'}
WORKSPACE_DTYPES = ("float32", "int32", "int64")  # element types with atomics, named alike in tl and torch


@dataclass(frozen=True)
class Partial:
    """One accumulator of a split loop and where its slices meet."""

    var: str  # the accumulator's name in the kernel
    op: str  # "sum" | "max" | "min"
    workspace: str  # the new pointer parameter holding the slices' combined value
    slot: str  # kernel text: this program's offsets into the workspace
    mask: str | None = None  # kernel text: which lanes of the slot exist (output-coordinate slots)
    dtype: str = "float32"  # the workspace's element type (torch / tl name)
    # op "online" (online_pairs.py): `slot` is this slice's own slot, stored to, not added into; `fold` (on the
    # pair's sum) is the kernel text that rebuilds the pair from every slice's slot
    fold: str = ""


@dataclass(frozen=True)
class Layout:
    """An accumulator's shape and element type, from the statement that starts it."""

    dims: tuple[ast.expr, ...]  # () for a scalar
    dtype: str  # "float32" | "int32" | "int64"


def accumulator_layout(ks: KernelSource, init: ast.expr) -> Layout:
    """`tl.zeros(shape, dtype=...)`, `tl.full(shape, value, dtype)`, or a scalar literal (`0.0`, `float("-inf")`)."""
    if ks.is_tl(init, "zeros", "full"):
        shape = init.args[0] if init.args else next((k.value for k in init.keywords if k.arg == "shape"), None)
        dtype = next((k.value for k in init.keywords if k.arg == "dtype"), None)
        if dtype is None and ks.is_tl(init, "full") and len(init.args) > 2:
            dtype = init.args[2]
        name = ks.resolve(dtype).rsplit(".", 1)[-1] if dtype is not None and ks.resolve(dtype) else None
        if dtype is None and ks.is_tl(init, "zeros"):
            name = "float32"  # tl.zeros defaults to fp32
        if name not in WORKSPACE_DTYPES:
            raise Decline(f"line {init.lineno}: an accumulator of type {name or '?'} has no workspace atomic here")
        if isinstance(shape, (ast.Tuple, ast.List)):
            dims = tuple(shape.elts)
        elif shape is not None:
            dims = (shape,)
        else:
            raise Decline(f"line {init.lineno}: the accumulator's shape is not written out")
        if len(dims) > 2:
            raise Decline(f"line {init.lineno}: a {len(dims)}-D accumulator")
        return Layout(dims, name)
    if isinstance(init, ast.Constant) and isinstance(init.value, float):
        return Layout((), "float32")
    if isinstance(init, ast.Call) and isinstance(init.func, ast.Name) and init.func.id == "float":
        return Layout((), "float32")
    if isinstance(init, ast.UnaryOp) and isinstance(init.operand, ast.Constant) and isinstance(init.operand.value, float):
        return Layout((), "float32")
    raise Decline(f"line {getattr(init, 'lineno', '?')}: the accumulator does not start from tl.zeros, tl.full or "
                  "a float literal (its shape and type are not written out)")


def program_slot(tl: callable, program: str, dims: list[str]) -> str:
    """Offsets of one program's slot for an accumulator of the given dims (kernel text): slots are numel apart."""
    if not dims:
        return program
    if len(dims) == 1:
        return f"{program} * {dims[0]} + {tl('arange')}(0, {dims[0]})"
    d0, d1 = dims
    return (f"{program} * ({d0} * {d1}) + {tl('arange')}(0, {d0})[:, None] * {d1} + "
            f"{tl('arange')}(0, {d1})[None, :]")


def combine_then_finish(ks: KernelSource, indent: str, partials: list[Partial], arrivals: str, program: str,
                        axis: int, names: dict[str, str]) -> str:
    """Kernel text after the split loop, ending with the `if <finishes>:` under which the rest of the kernel goes.
    `names`: fresh names for "finishes" and a slot variable per partial (partials with the same slot share one)."""
    tl, finishes = ks.tl, names["finishes"]
    slices = f"{tl('num_programs')}({axis})"
    lines = [
        "# the slices' partials meet in a workspace; the last slice to arrive finishes the kernel",
        f"{finishes} = {slices} == 1",
        f"if {slices} > 1:",
    ]
    body: list[str] = []
    slots: dict[str, str] = {}  # one variable per distinct slot expression
    for p in partials:
        if p.slot not in slots:
            slots[p.slot] = names[p.var]
            body.append(f"{slots[p.slot]} = {p.slot}")
        body.append(_combine_call(tl, p, slots[p.slot]))
    body += [
        f"{tl('debug_barrier')}()  # every partial of this program is in before it counts itself in",
        f"{finishes} = {tl('atomic_add')}({arrivals} + {program}, 1) == {slices} - 1",
        f"if {finishes}:  # every slice is in: read the partials back from L2, where they landed",
    ]
    reloads = []
    for p in partials:
        if p.op == "online":
            reloads += p.fold.splitlines()
            continue
        mask = f", mask={p.mask}, other=0" if p.mask else ""
        reloads.append(f"{p.var} = {tl('load')}({p.workspace} + {slots[p.slot]}{mask}, cache_modifier=\".cg\")")
    text = "".join(f"{indent}{x}\n" for x in lines)
    text += "".join(f"{indent}    {x}\n" for x in body)
    text += "".join(f"{indent}        {x}\n" for x in reloads)
    return text + f"{indent}if {finishes}:\n"


def combine_per_launch(ks: KernelSource, indent: str, partials: list[Partial], phase: str, k: int,
                       slots: dict[str, str]) -> str:
    """Kernel text after split loop k when the kernel runs once per pass (`phase` a constexpr): launch k adds
    each slice's partials into the workspace, the later launches read the totals back (the end of launch k orders
    the two)."""
    tl = ks.tl
    adds, loads = [], []
    for p in partials:
        adds.append(_combine_call(tl, p, slots[p.var]))
        if p.op == "online":
            loads += p.fold.splitlines()
            continue
        other = f", mask={p.mask}, other=0" if p.mask else ""
        loads.append(f"{p.var} = {tl('load')}({p.workspace} + {slots[p.var]}{other})")
    setup = []
    for slot in dict.fromkeys(p.slot for p in partials):
        setup.append(f"{next(slots[p.var] for p in partials if p.slot == slot)} = {slot}")
    text = f"{indent}if {phase} == {k}:  # launch {k}: this slice's partials go into the workspace\n"
    text += "".join(f"{indent}    {x}\n" for x in setup + adds)
    text += f"{indent}if {phase} > {k}:  # a later launch: every slice reads the totals back\n"
    return text + "".join(f"{indent}    {x}\n" for x in setup + loads)


def _combine_call(tl: callable, p: Partial, slot: str) -> str:
    """How one slice's partial meets the others: an atomic into the total, or (an online pair) a store into the
    slice's own slot."""
    mask = f", mask={p.mask}" if p.mask else ""
    if p.op == "online":
        return f"{tl('store')}({p.workspace} + {slot}, {p.var}{mask})"
    return f"{tl(ATOMIC[p.op])}({p.workspace} + {slot}, {p.var}{mask}, sem=\"relaxed\")"


def indented_rest(text: str, indent: str) -> str:
    """The rest of the kernel moved one level in, under the `if` that lets only the last slice run it."""
    try:
        return reindent(text, indent, indent + "    ")
    except ValueError:
        raise Decline("the statements after the split loop are not indented uniformly") from None


def workspace_lines(torch: str, indent: str, partials: list[Partial], sizes: dict[str, str], arrivals: str | None,
                    programs: str, splits: str, device: str) -> str:
    """Wrapper text before the launch: each workspace (only when the loop is split) and the arrival counters
    (none for a kernel launched twice, whose first launch ends before the second reads the totals)."""
    out = []
    for p in partials:
        if p.op == "online":  # a slot per slice, each written before it is read
            out.append(f"{indent}{p.workspace} = {torch}.empty({sizes[p.var]} * {splits} if {splits} > 1 else 1, "
                       f"device={device}, dtype={torch}.{p.dtype})")
            continue
        size = f"{sizes[p.var]} if {splits} > 1 else 1"
        fill = f", {_FILL_VALUE[p.op]}" if p.op in _FILL_VALUE else ""
        shape = f"({size},)" if fill else size
        out.append(f"{indent}{p.workspace} = {torch}.{_TORCH_FILL[p.op]}({shape}{fill}, device={device}, "
                   f"dtype={torch}.{p.dtype})")
    if arrivals is None:
        return "".join(f"{x}\n" for x in out)
    out.append(f"{indent}# how many slices of each output have finished (the last one runs the rest of the kernel)")
    out.append(f"{indent}{arrivals} = {torch}.zeros({programs} if {splits} > 1 else 1, device={device}, "
               f"dtype={torch}.int32)")
    return "".join(f"{x}\n" for x in out)


def dead_starts(ks: KernelSource, loop: ast.For, rest: list[ast.stmt]) -> list[ast.Assign]:
    """Statements before the split loop that set a name the rest sets again before reading it, with nothing
    reading it in between (`mean = 0` ahead of `mean = tl.sum(acc) / n`). Under the runtime `if` of the last
    slice, Triton would merge the two values and refuse their different types (int32 and fp32); the first value is
    never read, so the schedule drops it."""
    body = ks.fn.body
    at = body.index(loop)
    rewritten = assigned_names(rest) - set(free_names(rest))
    out = []
    for i, s in enumerate(body[:at]):
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
            continue
        name = s.targets[0].id
        later = body[i + 1: at + 1]
        if name not in rewritten or name in free_names(later) or name in assigned_names(later):
            continue
        if any(isinstance(n, ast.Call) and (ks.tl_call(n) or "").startswith(("load", "store", "atomic"))
               for n in ast.walk(s.value)):
            continue
        out.append(s)
    return out


def has_return(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))
