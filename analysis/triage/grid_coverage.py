"""How a launch grid covers the data: a floor leaves the tail to no program (TL143); a ceiling with an unmasked
write lets the last block write past the end (TL144).

`grid = (M // BLOCK_M,)` with a kernel whose programs start at `pid * BLOCK_M` covers `M - M % BLOCK_M` rows: the
last `M % BLOCK_M` are never read or written, and no mask inside the kernel can bring them back. The fix is a
ceiling (`triton.cdiv(M, BLOCK_M)`) with a mask, or an assert that the size is a multiple. Reported where the
launch's own function asserts nothing about it and the kernel does not loop over programs (a grid-stride loop covers
any grid).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from ..kernels import LaunchSite
from . import references as ref
from .base import finding, is_masked, kernel_check, through_block_pointer
from .context import KernelContext
from .context_names import TL

FLOOR_GRID = register(
    Rule(
        code="TL143",
        name="grid-drops-the-tail",
        title="The grid floors the number of blocks: the tail gets no program",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "A grid of `n // BLOCK` programs, each starting at `program_id * BLOCK`, covers only the first "
            "`n - n % BLOCK` elements: when `n` is not a multiple of `BLOCK`, the rest is never computed, and the "
            "output keeps whatever `torch.empty` left there. No mask inside the kernel helps, since no program "
            "reaches those elements.\n\n**Fix:** launch `triton.cdiv(n, BLOCK)` programs and mask the last block "
            "(`offs < n`), or assert `n % BLOCK == 0` where the kernel is launched."
        ),
        references=(ref.VECTOR_ADD,),
    )
)


PAST_THE_END = register(
    Rule(
        code="TL144",
        name="unmasked-write-in-the-last-block",
        title="The grid rounds the blocks up and a write has no mask: the last block writes past the end",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "A grid of `triton.cdiv(n, BLOCK)` programs, each starting at `program_id * BLOCK`, gives the last "
            "program `BLOCK - n % BLOCK` lanes past the end when `n` is not a multiple of `BLOCK`. A `tl.store` or "
            "atomic there without a mask writes past the tensor: it corrupts whatever lies next in memory or "
            "faults.\n\n**Fix:** mask the write (`mask=offs < n`), or assert `n % BLOCK == 0` where the kernel is "
            "launched."
        ),
        references=(ref.VECTOR_ADD,),
    )
)


@kernel_check
def unmasked_writes_past_the_end(ctx: KernelContext) -> Iterator[Finding]:
    if ctx.kernel.is_helper or not ctx.launches:
        return
    calls = [n for n in ctx.nodes if isinstance(n, ast.Call)]
    if _grid_stride(ctx):
        return
    writes = [c for c in calls if (ctx.resolve(c.func) or "") in (TL + "store",) or
              (ctx.resolve(c.func) or "").startswith(TL + "atomic_")]
    writes = [w for w in writes if w.args and not is_masked(ctx, w) and not through_block_pointer(ctx, w)]
    if not writes:
        return
    reported: set[int] = set()
    for site in ctx.launches:
        bound = site.bind(ctx.kernel)
        for axis, element in enumerate(_grid_elements(site)):
            parts = _ceiling(element)
            if parts is None:
                continue
            total, block = parts
            params = _block_params(site, bound, block)
            starts = _block_starts(ctx, axis, params) if params else set()
            if not starts or _asserted(ctx, site, _divisors(bound, block, params)):
                continue
            wrapped = _wrapped(ctx, starts)
            for w in writes:
                if id(w) in reported or not ctx.derived_from(w.args[0], starts):
                    continue
                reported.add(id(w))
                wraps = wrapped and ctx.derived_from(w.args[0], wrapped)
                effect = ("its extra lanes wrap (`%`) onto the first elements and write them again (an atomic adds "
                          "them twice)" if wraps else "the last one writes past the end")
                yield finding(PAST_THE_END, ctx, w, (
                    f"this write has no mask, and grid axis {axis} launches `{ast.unparse(element)}` programs, "
                    f"each starting at `program_id({axis}) * {sorted(params)[0]}`: when `{total}` is not a multiple "
                    f"of `{block}` {effect} (nothing where it is launched asserts it)"))


def _wrapped(ctx: KernelContext, starts: set[str]) -> set[str]:
    """Names computed from the block starts with a `%` (`rm = (pid * BLOCK + lanes) % M`): indices that wrap."""
    closure = ctx.names_closure(starts)
    return {t.id for n in ctx.nodes if isinstance(n, ast.Assign) for t in n.targets
            if isinstance(t, ast.Name) and t.id in closure
            and any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mod) for b in ast.walk(n.value))}


def _ceiling(element: ast.expr) -> tuple[str, str] | None:
    """(n, BLOCK) of `triton.cdiv(n, BLOCK)`, `cdiv(n, BLOCK)` or `(n + BLOCK - 1) // BLOCK`."""
    if isinstance(element, ast.Call) and len(element.args) == 2 and not element.keywords:
        func = element.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "cdiv":
            return ast.unparse(element.args[0]), ast.unparse(element.args[1])
    if isinstance(element, ast.BinOp) and isinstance(element.op, ast.FloorDiv):
        block = ast.unparse(element.right)
        top = element.left
        if isinstance(top, ast.BinOp) and isinstance(top.op, ast.Sub) and isinstance(top.left, ast.BinOp) and \
                isinstance(top.left.op, ast.Add) and ast.unparse(top.left.right) == block:
            return ast.unparse(top.left.left), block
    return None


def _block_starts(ctx: KernelContext, axis: int, params: set[str]) -> set[str]:
    """Names assigned from a product of program id `axis` and one of `params` (a block's start or its offsets)."""
    out = set()
    for node in ctx.nodes:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        if any(_pid_times(ctx, n, axis, params) for n in ast.walk(node.value)):
            out.add(node.targets[0].id)
    return out


def _pid_times(ctx: KernelContext, node: ast.AST, axis: int, params: set[str]) -> bool:
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return False
    for a, b in ((node.left, node.right), (node.right, node.left)):
        if isinstance(b, ast.Name) and b.id in params and _is_program_id(ctx, a, axis):
            return True
    return False


def _is_program_id(ctx: KernelContext, node: ast.AST, axis: int) -> bool:
    if isinstance(node, ast.Call) and ctx.resolve(node.func) == TL + "program_id":
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
        return isinstance(arg, ast.Constant) and arg.value == axis
    if isinstance(node, ast.Name):
        return any(isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                   and n.targets[0].id == node.id and _is_program_id(ctx, n.value, axis) for n in ctx.nodes)
    return False


@kernel_check
def floor_divided_grid(ctx: KernelContext) -> Iterator[Finding]:
    if ctx.kernel.is_helper or not ctx.launches:
        return
    if _grid_stride(ctx):
        return  # programs stride over the work: any grid covers it
    for site in ctx.launches:
        bound = site.bind(ctx.kernel)
        for axis, element in enumerate(_grid_elements(site)):
            if not (isinstance(element, ast.BinOp) and isinstance(element.op, ast.FloorDiv)):
                continue
            total, block = ast.unparse(element.left), ast.unparse(element.right)
            if block in total:
                continue  # (n + BLOCK - 1) // BLOCK: a ceiling written by hand
            params = _block_params(site, bound, block)
            if not params or not _steps_by(ctx, axis, params):
                continue
            if _asserted(ctx, site, _divisors(bound, block, params)):
                continue
            yield finding(FLOOR_GRID, ctx, site.grid_span, (
                f"grid axis {axis} launches `{ast.unparse(element)}` programs and the kernel starts each at "
                f"`program_id({axis}) * {sorted(params)[0]}`: when `{total}` is not a multiple of `{block}` the last "
                f"`{total} % {block}` elements get no program (nothing here asserts it); use `triton.cdiv` and a mask"))


def _grid_stride(ctx: KernelContext) -> bool:
    """Programs loop over the work in steps of the grid (`for t in range(pid, n, tl.num_programs(0))`, a `while`
    on it): any grid covers the data. `tl.num_programs` used only as a size (a swizzle's grid shape) is not."""
    for loop in ctx.nodes:
        header = loop.iter if isinstance(loop, ast.For) else loop.test if isinstance(loop, ast.While) else None
        if header is None:
            continue
        names = ctx.names_of(header)
        for n in ast.walk(header):
            if isinstance(n, ast.Call) and ctx.resolve(n.func) == TL + "num_programs":
                return True
        if any(isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names for t in a.targets)
               and any(isinstance(c, ast.Call) and ctx.resolve(c.func) == TL + "num_programs"
                       for c in ast.walk(a.value)) for a in ctx.nodes):
            return True
    return False


def _grid_elements(site: LaunchSite) -> list[ast.expr]:
    text = site.grid_resolved_text or site.grid_text
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return []
    if isinstance(node, ast.Lambda):
        node = node.body
    return list(node.elts) if isinstance(node, (ast.Tuple, ast.List)) else [node]


def _block_params(site: LaunchSite, bound: dict, block: str) -> set[str]:
    """The kernel parameters the grid's divisor stands for: those the launch passes the same text, and, in a
    `lambda meta: ...` grid, the constexpr a `meta["NAME"]` reads (the launch's value of NAME)."""
    params = {name for name, arg in bound.items() if arg.text.strip() == block}
    try:
        node = ast.parse(block, mode="eval").body
    except SyntaxError:
        return params
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        grid = (site.grid_resolved_text or site.grid_text).strip()
        if grid.startswith("lambda") and node.slice.value in bound:
            params.add(node.slice.value)
    return params


def _steps_by(ctx: KernelContext, axis: int, params: set[str]) -> bool:
    """Some product in the kernel multiplies program id `axis` by one of `params`: programs start a block apart."""
    return any(_pid_times(ctx, node, axis, params) for node in ctx.nodes)


def _divisors(bound: dict, block: str, params: set[str]) -> set[str]:
    """The grid's divisor as written and as the launch passes it (`meta['BLOCK']` is the `block_size` passed)."""
    return {block, *(bound[p].text.strip() for p in params if p in bound)}


def _asserted(ctx: KernelContext, site: LaunchSite, blocks: set[str]) -> bool:
    """The function around the launch tests `n % m` (an assert, or an `if` that raises or pads) for `m` the
    grid's divisor, or a local integer constant that is a multiple of it (`assert N % PRE_BLOCK == 0` with
    `PRE_BLOCK = 128` beside `BLOCK_N1 = 128`)."""
    tree = ctx.module.tree
    if tree is None:
        return False
    scope = next((f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and f.name == site.function and f.lineno <= site.span.line <= (f.end_lineno or f.lineno)), tree)
    constants = _int_constants(scope)
    divisors = {v for b in blocks if (v := _int_value(b, constants))}
    for node in ast.walk(scope):
        test = node.test if isinstance(node, (ast.Assert, ast.If)) else None
        if test is None:
            continue
        for op in ast.walk(test):
            if not (isinstance(op, ast.BinOp) and isinstance(op.op, ast.Mod)):
                continue
            modulus = ast.unparse(op.right)
            if any(b in modulus for b in blocks):
                return True
            value = _int_value(modulus, constants)
            if value and any(value % d == 0 for d in divisors):
                return True
    return False


def _int_constants(scope: ast.AST) -> dict[str, int]:
    """Names every assignment of the scope sets to the same int literal (`BLOCK = 128`, `BM, BN = 32, 128`)."""
    seen: dict[str, set[object]] = {}
    for node in ast.walk(scope):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = [(target, node.value)]
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and \
                    len(target.elts) == len(node.value.elts):
                pairs = list(zip(target.elts, node.value.elts, strict=True))
            for name, value in pairs:
                if isinstance(name, ast.Name):
                    literal = value.value if isinstance(value, ast.Constant) and type(value.value) is int else None
                    seen.setdefault(name.id, set()).add(literal)
    return {name: next(iter(v)) for name, v in seen.items() if len(v) == 1 and None not in v}


def _int_value(text: str, constants: dict[str, int]) -> int | None:
    text = text.strip()
    if text.isdigit():
        return int(text)
    return constants.get(text)
