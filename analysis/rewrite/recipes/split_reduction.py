"""Split a long reduction loop over a second grid axis when the grid has too few programs to fill the device.

    acc = 0.0                                   # or tl.zeros([BLOCK], dtype=tl.float32)
    for row in range(0, n_rows, STEP):
        acc += ...                              # only additive updates
    tl.store(out_ptr + col, acc, mask=...)      # the value is linear in acc (acc, tl.sum(acc), acc * c, acc / c)

becomes a kernel whose programs on a new last grid axis each walk one contiguous slice of the loop range and add
their partial into the output with `tl.atomic_add`; every launch in the file zeroes the output first and launches
`split` programs on the new axis, chosen at run time so the grid reaches about four programs per SM (the SM count
is a guess from the device table for the target, named in the rationale). Atomics only add, and float atomics are
only safe to rely on for fp32 here: a known non-fp32 output or accumulator declines, an unknown output dtype keeps
the old single-slice launch (split 1) unless the tensor is fp32 at run time. Declines on max/min combines, non-zero
initial values, non-linear uses of the sum (sqrt, division by it), stores inside or before the loop, early returns
and grids that are not tuples or already have three axes.
"""

from __future__ import annotations

import ast

from ...core.devices import DEVICES
from ...core.targets import cuda_capability
from ..kernel_patterns import (
    add_terms,
    additive_update,
    assigned_names,
    grid_node,
    is_zero,
    literal_init,
    loaded_names,
    simple_range,
)
from ..model import RecipeContext
from ..recipe_edits import imported_as, paren
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..schedules.targets import measured_grid
from ..source_edit import Edit

PROGRAMS_PER_SM = 4  # enough resident programs per SM to hide memory latency on a streaming reduction
MAX_SPLIT = 64  # more slices add atomics without adding bandwidth
_WRITES = ("store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas", "atomic_and",
           "atomic_or", "atomic_xor")
_FP32 = ("float32", "float")


def _measured(ctx: RecipeContext) -> tuple[int | None, int | None]:
    """(the largest grid the profile measured for this kernel, the profiled device's SM count), when profiled."""
    profile = ctx.profile or {}
    device = profile.get("device") if isinstance(profile.get("device"), dict) else {}
    sms = device.get("sm_count")
    return measured_grid(ctx), (int(sms) if isinstance(sms, int) and sms > 0 else None)


def _sm_count(ctx: RecipeContext) -> tuple[int, str]:
    _, measured = _measured(ctx)
    if measured:
        return measured, f"{measured} SMs of the profiled device"
    target = ctx.target
    cap = cuda_capability(target)
    spec = DEVICES.get("h100") if cap is not None and cap // 10 == 9 else None  # the table's sm_9x device
    if spec is not None and spec.compute_units:
        return int(spec.compute_units), f"**guess:** {spec.compute_units} SMs of the {spec.name} (device table for {target})"
    return 108, f"**guess:** 108 SMs (an A100-class default for {target}: the device table has no entry)"


def _dtype_name(ks: KernelSource, node: ast.AST | None) -> str | None:
    """"float16" for `tl.float16` / `torch.float16`, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        module = ks.aliases.get(node.value.id, node.value.id)
        if module in ("torch", "triton.language") or module == ks.tl_alias:
            return node.attr
    return None  # `x.dtype` and the like: not known from the text


def _accumulators(ks: KernelSource, loop: ast.For, before: list[ast.stmt]) -> dict[str, ast.stmt]:
    """The names the loop combines into that were initialised before it, each with its initialiser."""
    inits: dict[str, ast.stmt] = {}
    for stmt in before:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            inits[stmt.targets[0].id] = stmt
    carried = assigned_names(loop.body) & set(inits)
    out: dict[str, ast.stmt] = {}
    for name in carried:
        updates = [s for s in ast.walk(loop) if isinstance(s, ast.stmt) and name in assigned_names([s])
                   and not isinstance(s, ast.For | ast.If | ast.While | ast.With)]
        for stmt in updates:
            if additive_update(stmt) is None:
                value = getattr(stmt, "value", None)
                if isinstance(value, ast.Call) and (ks.is_tl(value, "maximum", "minimum") or
                                                    isinstance(value.func, ast.Name) and value.func.id in ("max", "min")):
                    raise Decline(f"line {stmt.lineno}: `{name}` is combined with max/min; atomic_max/min exist only "
                                  "for some dtypes and this recipe splits sums only")
                raise Decline(f"line {stmt.lineno}: `{name}` is updated by something other than `+=`")
            if ks.parent(stmt) is not loop:
                raise Decline(f"line {stmt.lineno}: `{name}` is updated under a condition or an inner loop")
        init = inits[name]
        zero = literal_init(init.value) == 0.0
        full = ks.is_tl(init.value, "full")
        if ks.is_tl(init.value, "zeros") or full and len(init.value.args) > 1 and literal_init(init.value.args[1]) == 0.0:
            dtype = next((k.value for k in init.value.keywords if k.arg == "dtype"), None)
            position = 2 if full else 1
            if dtype is None and len(init.value.args) > position:
                dtype = init.value.args[position]
            if _dtype_name(ks, dtype) not in _FP32:
                raise Decline(f"line {init.lineno}: `{name}` accumulates in {ks.segment(dtype) if dtype else '?'}; "
                              "only fp32 sums are split (float atomics on other dtypes lose precision)")
            zero = True
        if not zero:
            raise Decline(f"line {init.lineno}: `{name}` starts from `{ks.segment(init.value)}`, not zero: every "
                          "slice would add it again")
        out[name] = init
    return out


def _linear(ks: KernelSource, node: ast.AST, acc: str) -> bool:
    """The expression is acc, tl.sum(acc...), acc * c, c * acc, acc / c or acc.to(tl.float32) of such."""
    if isinstance(node, ast.Name):
        return node.id == acc
    if ks.is_tl(node, "sum") and node.args:
        return _linear(ks, node.args[0], acc)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
        left, right = acc in loaded_names(node.left), acc in loaded_names(node.right)
        if isinstance(node.op, ast.Div):
            return left and not right and _linear(ks, node.left, acc)
        return left != right and _linear(ks, node.left if left else node.right, acc)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to"
            and len(node.args) == 1):
        if _dtype_name(ks, node.args[0]) not in _FP32:
            raise Decline(f"line {node.lineno}: the sum is stored as {ks.segment(node.args[0])}; only fp32 outputs "
                          "are split (atomic_add on other dtypes)")
        return _linear(ks, node.func.value, acc)
    return False


def _pattern(ks: KernelSource) -> tuple[ast.For, dict[str, ast.stmt], list[tuple[ast.Call, str]]]:
    fn = ks.fn
    if any(isinstance(n, ast.Return) for n in ast.walk(fn)):
        raise Decline("the kernel returns early")
    reasons: list[str] = []
    for index, loop in enumerate(fn.body):
        if not isinstance(loop, ast.For):
            continue
        if simple_range(loop) is None:
            reasons.append(f"line {loop.lineno}: not a plain `for v in range(...)`")
            continue
        accs = _accumulators(ks, loop, fn.body[:index])
        if not accs:
            reasons.append(f"line {loop.lineno}: the loop carries no zero-initialised sum")
            continue
        for node in [*ast.walk(loop), *(n for s in fn.body[:index] for n in ast.walk(s))]:
            if ks.is_tl(node, *_WRITES):
                raise Decline(f"line {node.lineno}: memory is written before or inside the reduction loop; each "
                              "slice would write it")
        leaked = (assigned_names(loop.body) | {loop.target.id}) - set(accs)
        after = fn.body[index + 1 :]
        stores: list[tuple[ast.Call, str]] = []
        for stmt in after:
            reads = loaded_names(stmt) & set(accs)
            if leaked & loaded_names(stmt):
                raise Decline(f"line {stmt.lineno}: a value of the loop's last iteration is used after it")
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if ks.is_tl(call, "store") and reads:
                value = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords
                                                                       if k.arg == "value"), None)
                acc = next(iter(reads))
                if len(reads) != 1 or value is None or acc in loaded_names(call.args[0]) or not _linear(ks, value, acc):
                    raise Decline(f"line {stmt.lineno}: the stored value is not a linear function of the sum "
                                  "(partial sums of slices could not be added)")
                stores.append((call, acc))
            elif reads:
                used = ks.segment(stmt).splitlines()[0][:60]
                raise Decline(f"line {stmt.lineno}: the sum is used by `{used}`, not by a linear store: partial sums "
                              "of slices cannot be combined there")
            elif any(ks.is_tl(n, *_WRITES) for n in ast.walk(stmt)):
                raise Decline(f"line {stmt.lineno}: a write that does not carry the sum would be repeated per slice")
        if not stores:
            reasons.append(f"line {loop.lineno}: the loop's sum is never stored")
            continue
        return loop, accs, stores
    raise Decline("; ".join(reasons) or "no top-level loop accumulating a sum: nothing to split")


def _output_param(ks: KernelSource, call: ast.Call) -> str:
    base = add_terms(call.args[0])[0]
    params = {p.name for p in ks.info.params}
    if not isinstance(base, ast.Name) or base.id not in params:
        raise Decline(f"line {call.lineno}: the store's pointer does not start with a pointer parameter")
    return base.id


def _known_dtype(ks: KernelSource, launch: ast.stmt, var: str) -> str | None:
    """The dtype attribute of the `var = torch.empty/zeros(..., dtype=torch.X)` that made the output, if any."""
    scope = ks.parent(launch)
    while scope is not None and not isinstance(scope, ast.FunctionDef):
        scope = ks.parent(scope)
    for node in ast.walk(scope or ks.tree):
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == var for t in node.targets)
                and isinstance(node.value, ast.Call)):
            dtype = next((k.value for k in node.value.keywords if k.arg == "dtype"), None)
            return _dtype_name(ks, dtype)
    return None


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    loop, accs, stores = _pattern(ks)
    outputs = {_output_param(ks, call) for call, _ in stores}
    torch = imported_as(ks, "torch")
    sites = ks.launches()
    if not sites:
        raise Decline("no launch of the kernel in this file: the output must be zeroed by the wrapper")
    sms, where = _sm_count(ks.ctx)
    measured, _ = _measured(ks.ctx)
    if measured is not None and measured >= PROGRAMS_PER_SM * sms:
        raise Decline(f"the profiled grid already had {measured:,} programs ({measured / sms:.0f} per SM): splitting "
                      "the loop adds atomics without filling the device more; the time goes elsewhere (access "
                      "pattern, per-program work)")
    ranks: set[int] = set()
    edits: list[Edit] = []
    guessed_dtype = False
    for site in sites:
        call = ks.node_at(site)
        grid = grid_node(ks, call)
        if not isinstance(grid, ast.Tuple) or not grid.elts or len(grid.elts) > 2:
            raise Decline(f"the grid at line {site.span.line} is not a tuple of one or two axes")
        ranks.add(len(grid.elts))
        launch = ks.enclosing_statement(call)
        if not isinstance(launch, ast.Expr) or launch.value is not call:
            raise Decline(f"the launch at line {site.span.line} is not a statement of its own")
        bound = site.bind(ks.info)
        tensors = []
        for param in sorted(outputs):
            arg = bound.get(param)
            if arg is None or not arg.text.isidentifier():
                raise Decline(f"the launch at line {site.span.line} passes `{arg.text if arg else '?'}` as {param}, "
                              "not a variable the wrapper can zero")
            dtype = _known_dtype(ks, launch, arg.text)
            if dtype is not None and dtype not in _FP32:
                raise Decline(f"the output {arg.text} is {dtype}: only fp32 outputs are combined with atomic_add")
            tensors.append((arg.text, dtype))
        split = ks.fresh("split")
        programs = " * ".join(f"({ks.segment(e)})" for e in grid.elts)
        target = f"{PROGRAMS_PER_SM * sms}"
        expr = f"max(1, min({MAX_SPLIT}, ({target} + {programs} - 1) // ({programs})))"
        unknown = [name for name, dtype in tensors if dtype is None]
        if unknown:
            guessed_dtype = True
            check = " and ".join(f"{name}.dtype == {torch}.float32" for name in unknown)
            expr = f"{expr} if {check} else 1"
        indent = ks.text.indent(launch)
        zero = "".join(f"{indent}{name}.zero_()\n" for name, _ in tensors)
        edits.append(ks.text.insert_before(launch, f"{zero}{indent}{split} = {expr}\n"))
        elts = ", ".join(ks.segment(e) for e in grid.elts)
        if isinstance(call.func.slice, ast.Tuple):
            edits.append(ks.text.replace(call.func.slice, f"({elts}, {split})"))
        else:
            edits.append(ks.text.replace(call.func.slice, f"(*{ks.segment(call.func.slice)}, {split})"))
    if len(ranks) != 1:
        raise Decline("launches with grids of different rank")
    axis = ranks.pop()
    for node in ast.walk(ks.fn):
        if ks.is_tl(node, "program_id", "num_programs") and node.args and ks.segment(node.args[0]) == str(axis):
            raise Decline(f"line {node.lineno}: the kernel already reads grid axis {axis}")
    start, stop, step = simple_range(loop)
    step_text = ks.segment(step) if step is not None else "1"
    if step_text.startswith("-"):
        raise Decline(f"line {loop.lineno}: a loop with a negative step")
    names = {k: ks.fresh(k) for k in ("split_id", "n_split", "split_span", "split_lo", "split_hi")}
    indent = ks.text.indent(loop)
    start_text, stop_text, step_text = paren(ks.segment(start)), paren(ks.segment(stop)), paren(step_text)
    # each slice is a whole number of steps, so every slice starts on the original loop's lattice
    length = stop_text if is_zero(start) else f"{stop_text} - {start_text}"
    span = (f"{ks.tl('cdiv')}({length}, {names['n_split']})" if step is None else
            f"{ks.tl('cdiv')}({length}, {step_text} * {names['n_split']}) * {step_text}")
    offset = f"{names['split_id']} * {names['split_span']}"
    header = (
        f"{indent}{names['split_id']} = {ks.tl('program_id')}({axis})\n"
        f"{indent}{names['n_split']} = {ks.tl('num_programs')}({axis})\n"
        f"{indent}{names['split_span']} = {span}\n"
        f"{indent}{names['split_lo']} = {offset if is_zero(start) else f'{start_text} + {offset}'}\n"
        f"{indent}{names['split_hi']} = {ks.tl('minimum')}({names['split_lo']} + {names['split_span']}, {stop_text})\n"
    )
    edits.append(ks.text.insert_before(loop, header))
    range_args = f"{names['split_lo']}, {names['split_hi']}" + (f", {step_text}" if step is not None else "")
    edits.append(Edit(ks.text.start(loop.iter.args[0]), ks.text.end(loop.iter.args[-1]), range_args))
    for call, _acc in stores:
        edits.append(ks.text.replace(call.func, ks.tl("atomic_add")))
    sums = ", ".join(f"`{a}`" for a in sorted(accs))
    rationale = (
        f"Each program reduced the whole loop at line {loop.lineno} into {sums} on its own, so the grid has only "
        f"as many programs as outputs and a small grid leaves SMs idle. The loop range is now split over grid axis "
        f"{axis}: each of `{split}` programs reduces one contiguous slice and adds its partial with tl.atomic_add "
        f"into the output, which the wrapper zeroes first. `{split}` aims at {PROGRAMS_PER_SM} programs per SM "
        f"({where}), at most {MAX_SPLIT}. fp32 atomics make the sum order nondeterministic (rounding "
        "differs run to run, within the usual fp32 summation error)."
    )
    if guessed_dtype:
        rationale += (" The output's dtype is not visible in the file: the wrapper splits only when it is fp32 at "
                      "run time and keeps one slice otherwise.")
    return [finish(recipe, ks.ctx, edits, "Split the reduction loop over a second grid axis (atomic_add partials)",
                   rationale, config={"programs_per_sm": PROGRAMS_PER_SM, "max_split": MAX_SPLIT})]


RECIPE = SourceRecipe(
    name="split-reduction",
    title="Split a long reduction loop over a second grid axis and combine with atomic_add",
    keys=("TL203", "TL204", "TL202", "TL205"),
    build=_build,
)
