"""Reductions and scans inside loops: a block reduction per iteration where one after the loop fits (TL125), and
a prefix sum written as a sequential scalar loop (TL134)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, header_span, kernel_check, short
from .context import KernelContext
from .context_names import TL
from .shapes import rank

REDUCTIONS = {TL + name for name in ("sum", "max", "min", "reduce", "xor_sum")}
# How an accumulator combines the per-iteration reduction: `acc += r`, `acc = acc + r`, `acc = max(acc, r)`.
_COMBINERS = {TL + "maximum", TL + "minimum"}
_SCAN_OPS = {TL + "cumsum", TL + "cumprod", TL + "associative_scan"}

REDUCTION_IN_LOOP = register(
    Rule(
        code="TL125",
        name="block-reduction-in-loop",
        title="Block reduction on every loop iteration where one after the loop fits",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "`acc += tl.sum(x)` inside a loop reduces the whole block to a scalar on every iteration: on NVIDIA "
            "each reduction is a tree of warp shuffles plus a shared-memory exchange and a barrier between "
            "warps, on Ascend a vector reduction followed by a scalar read-back that stalls the pipeline. When "
            "only the total is needed after the loop, the reduction can wait: keep a block-shaped accumulator "
            "(`acc = tl.zeros([BLOCK], tl.float32)`; `acc += x` in the loop) and reduce once after the loop "
            "(`total = tl.sum(acc)`). Same for `tl.max`/`tl.min` with `tl.maximum`/`tl.minimum`.\n\n"
            "Not reported when the reduced value is used inside the loop (online softmax rescaling, a running "
            "prefix, a per-iteration store of a segmented sum): there the per-iteration reduction is the point; "
            "nor for a 2-D tile reduced along one axis (`tl.sum(tile, axis=1)`), where the accumulator would be "
            "tile-shaped and cost as many registers as the tile.\n\n"
            "**Fix:** a vector accumulator in the loop, one reduction after it."
        ),
        references=(ref.LAYER_NORM, ref.FUSED_SOFTMAX, ref.ASCEND_VECTOR_OPS),
    )
)

SEQUENTIAL_SCAN = register(
    Rule(
        code="TL134",
        name="sequential-scalar-scan",
        title="Prefix sum written as a sequential scalar loop",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "A loop that loads one element, adds it to a running total and stores the total at the same index "
            "is a prefix sum (scan) executed one element at a time on one lane: n dependent scalar loads, adds "
            "and stores per program. `tl.cumsum(x, axis=0)` (or `tl.associative_scan` with a custom combine "
            "function, e.g. for a linear recurrence h = a*h + b) computes the scan of a whole block in log2(BLOCK) "
            "parallel steps across the lanes; longer rows carry the block's last value into the next block.\n\n"
            "**Fix:** load a block, `tl.cumsum(x, axis=0) + carry`, store the block, "
            "`carry += tl.sum(x, axis=0)` (a running product alike with `tl.cumprod` and `carry *=`)."
        ),
        references=(
            f"{ref.TRITON_DOCS}/python-api/generated/triton.language.cumsum.html",
            f"{ref.TRITON_DOCS}/python-api/generated/triton.language.associative_scan.html",
        ),
    )
)


@kernel_check
def block_reduction_in_loop(ctx: KernelContext) -> Iterator[Finding]:
    for call, name in ctx.calls:
        if name not in REDUCTIONS:
            continue
        loops = ctx.enclosing_loops(call)
        if not loops or not ctx.is_range_loop(loops[0]):
            continue
        loop = loops[0]
        acc = _accumulated_into(ctx, call)
        if acc is None or not _only_accumulated(ctx, loop, acc):
            continue
        if _row_wise(ctx, call):
            continue  # a tile reduced along one axis: the tile-shaped accumulator would cost its registers
        if _one_element_selection(ctx, call):
            continue  # an element picked per iteration, not a partial sum
        if _one_iteration_guard(ctx, call, loop):
            continue  # `if i == 0:` inside the loop: the reduction runs once, not per iteration
        op = name.rsplit(".", 1)[-1]
        message = (
            f"tl.{op}({short(ctx, call.args[0]) if call.args else ''}) runs on every iteration of the loop at "
            f"line {loop.lineno} only to accumulate `{acc}`: accumulate a block and reduce once after the loop"
        )
        yield finding(
            REDUCTION_IN_LOOP, ctx, call, message, data={"accumulator": acc, "loop_line": loop.lineno}
        )


def _row_wise(ctx: KernelContext, call: ast.Call) -> bool:
    """`tl.sum(tile, axis=k)` of a 2-D (or higher) tile: the result is a vector, not a scalar."""
    axis = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "axis"), None)
    if axis is None or (isinstance(axis, ast.Constant) and axis.value is None) or not call.args:
        return False
    return rank(ctx, call.args[0]) >= 2


def _accumulated_into(ctx: KernelContext, call: ast.Call) -> str | None:
    """The accumulator `call`'s result is folded into: `acc += r`, `acc = acc + r`, `acc = tl.maximum(acc, r)`
    (directly, or through one local name assigned from the reduction)."""
    stmt = _statement(ctx, call)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        if isinstance(stmt.op, (ast.Add, ast.Sub, ast.Mult, ast.BitOr, ast.BitXor)):
            return stmt.target.id
        return None
    if (
        not isinstance(stmt, ast.Assign)
        or len(stmt.targets) != 1
        or not isinstance(stmt.targets[0], ast.Name)
    ):
        return None
    target = stmt.targets[0].id
    value = stmt.value
    if _combines(ctx, value, target):
        return target
    if value is call:  # r = tl.sum(x) then acc += r (the one use of r)
        users = [
            n for n in ctx.nodes if isinstance(n, ast.Name) and n.id == target and isinstance(n.ctx, ast.Load)
        ]
        if len(users) == 1:
            user_stmt = _statement(ctx, users[0])
            if isinstance(user_stmt, ast.AugAssign) and isinstance(user_stmt.target, ast.Name):
                return user_stmt.target.id
            if (
                isinstance(user_stmt, ast.Assign)
                and len(user_stmt.targets) == 1
                and isinstance(user_stmt.targets[0], ast.Name)
                and _combines(ctx, user_stmt.value, user_stmt.targets[0].id)
            ):
                return user_stmt.targets[0].id
    return None


def _combines(ctx: KernelContext, value: ast.AST, target: str) -> bool:
    """`target + r`, `r + target`, `tl.maximum(target, r)`: the old value of `target` folded with one more."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)):
        return any(isinstance(side, ast.Name) and side.id == target for side in (value.left, value.right))
    if isinstance(value, ast.Call) and ctx.resolve(value.func) in _COMBINERS and len(value.args) == 2:
        return any(isinstance(arg, ast.Name) and arg.id == target for arg in value.args)
    return False


def _only_accumulated(ctx: KernelContext, loop: ast.For, acc: str) -> bool:
    """Whether, inside the loop, `acc` is read only by its own updates (so its value is needed after the loop
    only). A read anywhere else in the loop (a store, a rescale, a running prefix) needs the per-iteration total."""
    for node in ctx.walk(loop):
        if not (isinstance(node, ast.Name) and node.id == acc and isinstance(node.ctx, ast.Load)):
            continue
        stmt = _statement(ctx, node)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == acc:
            continue
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == acc for t in stmt.targets
        ):
            if _combines(ctx, stmt.value, acc):
                continue
        return False
    return True


def _statement(ctx: KernelContext, node: ast.AST) -> ast.AST | None:
    current: ast.AST | None = node
    while current is not None and not isinstance(current, ast.stmt):
        current = ctx.parent(current)
    return current


@kernel_check
def sequential_scan(ctx: KernelContext) -> Iterator[Finding]:
    if any(True for _ in ctx.calls_to(*_SCAN_OPS)):
        return
    for loop in ctx.loops:
        if not ctx.is_range_loop(loop) or not isinstance(loop.target, ast.Name):
            continue
        index = loop.target.id
        for node in ctx.walk(loop):
            if not isinstance(node, ast.AugAssign) or not isinstance(node.op, (ast.Add, ast.Mult)):
                continue  # a running sum, or a running product (tl.cumprod)
            if not isinstance(node.target, ast.Name) or ctx.enclosing_loops(node)[:1] != [loop]:
                continue
            acc = node.target.id
            if ctx.is_block_expr(node.value) or not _loaded_in_loop(ctx, loop, node.value):
                continue
            store = _stores_running_value(ctx, loop, acc, index)
            if store is None:
                continue
            what, scan = ("product", "tl.cumprod") if isinstance(node.op, ast.Mult) else ("sum", "tl.cumsum")
            message = (
                f"loop at line {loop.lineno} stores the running {'total' if what == 'sum' else what} `{acc}` one "
                f"element per iteration: a sequential prefix {what}; use {scan} on blocks (carry the block's "
                f"{'total' if what == 'sum' else what} between blocks)"
            )
            yield finding(SEQUENTIAL_SCAN, ctx, header_span(ctx, loop), message, data={"accumulator": acc})
            break


def _one_iteration_guard(ctx: KernelContext, call: ast.Call, loop: ast.For) -> bool:
    """The call sits in the body of an `if` whose test requires the loop's index to equal a value that does not
    change with it (`if i == 0:`, `if HAS_BIAS and i == W - 1:`): it runs on one iteration at most."""
    index = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    child: ast.AST = call
    for node in _ancestors(ctx, call, loop):
        if isinstance(node, ast.If) and child in node.body and _requires_equal(node.test, index):
            return True
        child = node
    return False


def _requires_equal(test: ast.expr, index: set[str]) -> bool:
    """`test` is true only when an index variable equals a loop-invariant value (through `and`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_requires_equal(v, index) for v in test.values)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    for side, other in (sides, sides[::-1]):
        if isinstance(side, ast.Name) and side.id in index:
            return not {n.id for n in ast.walk(other) if isinstance(n, ast.Name)} & index
    return False


def _ancestors(ctx: KernelContext, node: ast.AST, stop: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []
    current = ctx.parent(node)
    while current is not None and current is not stop:
        out.append(current)
        current = ctx.parent(current)
    return out


def _loaded_in_loop(ctx: KernelContext, loop: ast.For, value: ast.AST) -> bool:
    """Whether `value` reads a tl.load made in this loop (directly or through a local name)."""
    if any(isinstance(c, ast.Call) and ctx.load_call(c) is c for c in ctx.walk(value)):
        return True
    loaded = set(ctx.load_names) & ctx.assigned_in(loop)
    return bool(ctx.names_of(value) & ctx.names_closure(loaded)) if loaded else False


def _stores_running_value(ctx: KernelContext, loop: ast.For, acc: str, index: str) -> ast.Call | None:
    """A store in the loop whose value reads `acc` and whose address moves with the loop index."""
    for sub in ctx.walk(loop):
        if not isinstance(sub, ast.Call) or ctx.resolve(sub.func) != TL + "store":
            continue
        if any(isinstance(a, ast.If) for a in _ancestors(ctx, sub, loop)):
            continue  # stored only when a segment ends: a segmented reduction, not a running prefix
        value = (
            sub.args[1]
            if len(sub.args) > 1
            else next((k.value for k in sub.keywords if k.arg == "value"), None)
        )
        pointer = ctx.pointer_arg(sub)
        if value is None or pointer is None or ctx.is_block_expr(pointer):
            continue
        if acc in ctx.names_of(value) and ctx.names_of(pointer) & ctx.names_closure({index}):
            return sub
    return None


def _one_element_selection(ctx: KernelContext, call: ast.Call) -> bool:
    """`tl.sum(tl.where(lanes == k, x, 0))`: reads the one element x[k] chosen this iteration (top-k, a
    softmax weight per row); there is no block to accumulate and reduce once."""
    if not call.args or not isinstance(call.args[0], ast.Call) or ctx.resolve(call.args[0].func) != TL + "where":
        return False
    cond = call.args[0].args[0] if call.args[0].args else None
    if not isinstance(cond, ast.Compare) or len(cond.ops) != 1 or not isinstance(cond.ops[0], ast.Eq):
        return False
    left, right = cond.left, cond.comparators[0]
    return any(
        ctx.is_index_expr(lanes) and rank(ctx, chosen) == 0
        for lanes, chosen in ((left, right), (right, left))
    )
