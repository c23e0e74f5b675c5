"""What the schedules share: the kernel's lifted model, the AST nodes the model's lines point to, regions of the
kernel re-emitted with edits inside them, new constexpr parameters, and launch rewrites.

A schedule reads *what* the kernel computes from the model (analysis/computation) and takes *how the user wrote
it* (names, expressions, comments) from the AST, so the emitted kernel reads like the user's own.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ...computation.classify import Kind, classify
from ...computation.lift import lift_kernel
from ...computation.model import LOOP, Access, Accumulation, Computation, IndexVar
from ..model import Candidate, NotApplicable, RecipeContext
from ..recipe_kit import Decline, KernelSource
from ..source_edit import Edit, apply_edits, reindent

Build = Callable[[object, KernelSource, Computation, Kind], list[Candidate]]


class ScheduleRecipe:
    """A schedule: `build(recipe, ks, comp, kind)` returns candidates or raises Decline (one module defines one)."""

    def __init__(self, name: str, title: str, build: Build, summary: str = "", evidence: tuple[str, ...] = ()) -> None:
        from ..model import ANY_KERNEL

        self.name = name
        self.title = title
        self.keys = (ANY_KERNEL, *evidence)  # tried on every kernel; these findings, when present, are its evidence
        self.summary = summary
        self._build = build

    def propose(self, ctx: RecipeContext) -> list[Candidate] | NotApplicable:
        try:
            try:
                candidates = self._propose(ctx)
            except LoopForm as carried:
                candidates = self._in_index_form(ctx, carried)
        except Decline as exc:
            return NotApplicable(self.name, str(exc))
        if not candidates:
            return NotApplicable(self.name, "the schedule produced no candidate")
        return candidates

    def _propose(self, ctx: RecipeContext) -> list[Candidate]:
        ks = KernelSource(ctx)
        comp = lift_kernel(ctx.module, ks.info)
        if comp.unmodelled:
            raise Decline(f"the model of {ctx.kernel} is incomplete: {comp.unmodelled[0]}")
        return self._build(self, ks, comp, classify(comp))

    def _in_index_form(self, ctx: RecipeContext, carried: LoopForm) -> list[Candidate]:
        """Again, with the pointers the kernel's loops advance written as offsets from the loop index and its
        backward loops counted forwards."""
        import dataclasses

        from ...kernels.parse import parse_module
        from .pointer_inductions import index_form

        source = index_form(KernelSource(ctx))
        if source is None:  # nothing it can rewrite (a block pointer's tl.advance, a step that varies)
            raise carried
        module = parse_module(source)
        try:
            candidates = self._propose(dataclasses.replace(ctx, source=source, module=module))
        except Decline as exc:
            raise Decline(f"with the loops in index form: {exc}") from None
        note = ("\n\nThe loops are written in index form first (the same addresses, in the same order): pointers "
                "a loop advanced each iteration become offsets from its index, and a loop that counted down counts "
                "up with its index derived from the count, so the new iteration order moves them.")
        return [dataclasses.replace(c, rationale=c.rationale + note) for c in candidates]

    def __repr__(self) -> str:
        return f"<schedule {self.name}>"


class LoopForm(Decline):
    """A loop the schedule cannot reorder as written: it carries a value its iterations advance (a pointer, a block
    pointer) or runs backwards. pointer_inductions.index_form rewrites the forms it can; the schedule retries."""


def require_class(kind: Kind, *names: str) -> None:
    if kind.name not in names:
        raise Decline(f"the kernel computes {_a(kind.name)}, not {' or '.join(_a(n) for n in names)}")


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def loop_node(ks: KernelSource, var: IndexVar) -> ast.For:
    """The `for` statement of a loop index variable."""
    if var.kind != LOOP:
        raise Decline(f"{var.name} is not a loop")
    for node in ast.walk(ks.fn):
        if isinstance(node, ast.For) and node.lineno == var.line:
            return node
    raise Decline(f"cannot find the loop on line {var.line}")


def dot_accumulations(ks: KernelSource, comp: Computation) -> list[Accumulation]:
    """Accumulations of tl.dot products: `acc = tl.dot(a, b, acc)`, and `acc += tl.dot(a, b)` (a sum of products
    whose loop calls tl.dot)."""
    out = []
    for a in comp.accumulations:
        if a.op == "dot":
            out.append(a)
        elif a.op == "sum" and len(a.product_of) >= 2:
            var = comp.var(a.loop)
            loop = next((n for n in ast.walk(ks.fn) if isinstance(n, ast.For) and var is not None
                         and n.lineno == var.line), None)
            if loop is not None and any(ks.tl_call(n) == "dot" for n in ast.walk(loop)):
                out.append(a)
    return out


def access_call(ks: KernelSource, access: Access) -> ast.Call:
    """The tl.load / tl.store / tl.atomic_* call an access was lifted from (helpers are not rewritten)."""
    names = ("load",) if access.kind == "load" else ("store",) if access.kind == "store" else None
    for node in ast.walk(ks.fn):
        if isinstance(node, ast.Call) and node.lineno == access.line:
            call = ks.tl_call(node)
            if (names and call in names) or (names is None and call and call.startswith("atomic_")):
                return node
    raise Decline(f"line {access.line}: the {access.kind} is not written in the kernel itself (a helper?)")


def accesses_in(comp: Computation, loop: str) -> list[Access]:
    return [a for a in comp.accesses if loop in a.in_loops]


def require_affine(accesses: list[Access]) -> None:
    for a in accesses:
        if a.offset is None or a.data_dependent:
            raise Decline(f"line {a.line}: the {a.kind} of {a.tensor} is not affine "
                          f"({a.why or 'address from loaded values'})")


def region_text(ks: KernelSource, first: ast.stmt, last: ast.stmt, edits: list[Edit]) -> str:
    """The whole lines of statements first..last with `edits` (inside them) applied."""
    start, end = ks.text.statement_lines(first, last)
    inner = [Edit(e.start - start, e.end - start, e.text) for e in edits if start <= e.start and e.end <= end]
    if len(inner) != len(edits):
        raise Decline("an edit falls outside the region it belongs to")
    try:
        return apply_edits(ks.text.source[start:end], inner)
    except ValueError as exc:
        raise Decline(f"the schedule's edits conflict ({exc})") from None


def node_text(ks: KernelSource, node: ast.AST, edits: list[Edit]) -> str:
    """The source text of one expression with the edits inside it applied; those edits are taken out of `edits`
    (the caller replaces the node as a whole)."""
    return span_text(ks, ks.text.start(node), ks.text.end(node), edits)


def span_text(ks: KernelSource, start: int, end: int, edits: list[Edit], insert_at_end: bool = True) -> str:
    """source[start:end] with the edits inside it applied, taken out of `edits`. `insert_at_end=False` leaves an
    insertion at `end` to the next span (a loop's header inserted before it goes with the loop)."""
    inner = [e for e in edits if start <= e.start and e.end <= end and (insert_at_end or not e.start == e.end == end)]
    for e in inner:
        edits.remove(e)
    try:
        return apply_edits(ks.text.source[start:end], [Edit(e.start - start, e.end - start, e.text) for e in inner])
    except ValueError as exc:
        raise Decline(f"the schedule's edits conflict ({exc})") from None


def dedent_body(ks: KernelSource, loop: ast.For, text: str) -> str:
    """A loop body's text moved to the loop's own indentation."""
    try:
        return reindent(text, ks.text.indent(loop.body[0]), ks.text.indent(loop))
    except ValueError:
        raise Decline(f"line {loop.lineno}: the loop body's indentation is not uniform") from None


def append_constexprs(ks: KernelSource, names: list[str], constexpr: bool = True) -> Edit:
    """New parameters after the kernel's last parameter (the signature is otherwise unchanged): constexprs, or
    plain (pointer or scalar) parameters that every launch then passes by keyword."""
    args = ks.fn.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.kw_defaults:
        raise Decline("the kernel has defaulted, keyword-only or variadic parameters")
    last = args.args[-1]
    text = "".join(f", {n}: {ks.tl('constexpr')}" if constexpr else f", {n}" for n in names)
    return Edit(ks.text.end(last), ks.text.end(last), text)


def param_names(ks: KernelSource) -> list[str]:
    return [a.arg for a in ks.fn.args.args]


def launch_argument(ks: KernelSource, call: ast.Call, param: str) -> ast.expr:
    """The expression a launch passes for one kernel parameter (by position or keyword)."""
    names = param_names(ks)
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value
    index = names.index(param) if param in names else -1
    if 0 <= index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    raise Decline(f"the launch on line {call.lineno} does not pass {param} where it can be read")


def one_axis_grid(ks: KernelSource, call: ast.Call) -> str:
    """The text of the first (only) grid axis at a launch: `n` for `[(n,)]`, `grid[0]` for a named 1-tuple."""
    return grid_axes(ks, call, 1)[0]


def grid_axes(ks: KernelSource, call: ast.Call, count: int) -> list[str]:
    """The text of each axis of a launch's `count`-axis grid: the elements of `[(a, b)]`, `grid[i]` for a name
    bound to such a tuple."""
    from ..kernel_patterns import grid_node

    grid = grid_node(ks, call)
    if not (isinstance(grid, ast.Tuple) and len(grid.elts) == count):
        raise Decline(f"the grid at line {call.lineno} is not a {'one' if count == 1 else count}-axis tuple")
    if isinstance(call.func.slice, ast.Tuple):
        return [ks.segment(e) for e in grid.elts]
    return [f"{ks.segment(call.func.slice)}[{i}]" for i in range(count)]


def kernel_decorators_start(ks: KernelSource) -> int:
    first = min([d.lineno for d in ks.fn.decorator_list] + [ks.fn.lineno])
    return ks.text.line_start(first)


def kernel_text(ks: KernelSource) -> str:
    """The kernel's whole definition, decorators included."""
    return ks.text.source[kernel_decorators_start(ks): ks.text.line_end(ks.fn.end_lineno)]


def constexpr_params(ks: KernelSource) -> set[str]:
    return {p.name for p in ks.info.params if p.is_constexpr}


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def reorderable_loop(ks: KernelSource, var: IndexVar, accs: set[str], what: str) -> tuple[ast.For, ast.expr,
                                                                                          ast.expr, ast.expr | None]:
    """The `for` of loop `var` and its range (start, stop, step or None) for a schedule that changes which of its
    iterations run where: a plain range() carrying no induction besides the accumulators `accs`."""
    from ..kernel_patterns import simple_range

    loop = loop_node(ks, var)
    moved = carried_inductions(ks, loop, accs)
    if moved:
        raise LoopForm(f"line {loop.lineno}: the loop advances {', '.join(moved)} each iteration (an induction the "
                      "new iteration order would not move)")
    parts = simple_range(loop)
    if parts is None:
        raise Decline(f"line {loop.lineno}: the {what} loop is not a plain range()")
    return (loop, *parts)


def carried_inductions(ks: KernelSource, loop: ast.For, keep: set[str]) -> list[str]:
    """Names other than `keep` that the loop body reassigns after they were set before the loop (a pointer
    advanced per iteration, `blk = tl.advance(blk, ...)`): they move with the iteration count, not the loop
    variable, so a schedule that changes which iterations run must decline."""
    from ..kernel_patterns import assigned_names

    # only a name an iteration reads before it sets it carries over; one set first (offsets recomputed from the
    # loop variable, a name an earlier loop also used) starts over in every iteration
    inside = assigned_names(loop.body) & set(free_names(loop.body))
    before: set[str] = set()
    for s in ks.fn.body:
        if s is loop:
            break
        before |= assigned_names([s])
    return sorted((inside & before) - keep - {loop.target.id if isinstance(loop.target, ast.Name) else ""})


def free_names(stmts: list[ast.stmt]) -> list[str]:
    """Names the statements read before (or without) assigning them, in first-use order. A `for` assigns its target
    before its body runs and an `if` reads its test first; a name a branch or a loop body assigns counts as assigned
    after it (a read of it before any assignment is still free)."""
    out: list[str] = []

    def reads(node: ast.AST | None, assigned: set[str]) -> None:
        for n in ast.walk(node) if node is not None else ():
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in assigned and n.id not in out:
                out.append(n.id)

    def block(body: list[ast.stmt], assigned: set[str]) -> set[str]:
        assigned = set(assigned)
        for stmt in body:
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                reads(stmt.iter, assigned)
                inner = block(stmt.body, assigned | names_in(stmt.target))
                assigned |= inner | block(stmt.orelse, assigned)
            elif isinstance(stmt, ast.While):
                reads(stmt.test, assigned)
                assigned |= block(stmt.body, assigned) | block(stmt.orelse, assigned)
            elif isinstance(stmt, ast.If):
                reads(stmt.test, assigned)
                assigned |= block(stmt.body, assigned) | block(stmt.orelse, assigned)
            else:
                if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):  # `acc += x` reads acc
                    if stmt.target.id not in assigned and stmt.target.id not in out:
                        out.append(stmt.target.id)
                reads(stmt, assigned)
                assigned |= assigned_in(stmt)
        return assigned

    block(stmts, set())
    return out


def assigned_in(stmt: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
