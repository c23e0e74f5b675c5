"""What every recipe needs: the kernel's own AST (a private parse), `tl.*` name resolution, and a checked result.

A recipe recognises its pattern on `KernelSource`, builds `Edit`s, and calls `finish`, which applies them, checks
that the new file still parses and still defines the kernel, and wraps it in a `Candidate` tied to the findings
that motivated it. Anything not exactly the pattern is a `NotApplicable` with the reason: never half an edit.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from ..kernels import LaunchSite
from .model import Candidate, NotApplicable, RecipeContext
from .source_edit import Edit, SourceText, apply_edits

TL = "triton.language."
REDUCTIONS = ("sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum")


class Decline(Exception):
    """Raised inside a recipe when the code is not exactly its pattern; turned into NotApplicable."""


class KernelSource:
    def __init__(self, ctx: RecipeContext) -> None:
        self.ctx = ctx
        self.text = SourceText(ctx.source)
        try:
            self.tree = ast.parse(ctx.source)
        except SyntaxError as exc:
            raise Decline(f"the file does not parse (line {exc.lineno})") from None
        self.aliases = ctx.module.aliases
        info = ctx.module.kernel(ctx.kernel)
        if info is None:
            raise Decline(f"no jit function named {ctx.kernel} in this file")
        self.info = info
        self.fn = next(
            (
                n
                for n in ast.walk(self.tree)
                if isinstance(n, ast.FunctionDef) and n.name == ctx.kernel and n.lineno == info.def_span.line
            ),
            None,
        )
        if self.fn is None:
            raise Decline(f"cannot locate {ctx.kernel} in the file")
        self.tl_alias = ctx.module.language_alias
        self._parents: dict[int, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self._parents[id(child)] = node

    # names ------------------------------------------------------------------------------------------------
    def resolve(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id], *reversed(parts)])

    def tl_call(self, node: ast.AST | None) -> str | None:
        """"sum" for `tl.sum(...)` (any alias of triton.language, tl.math included), else None."""
        if not isinstance(node, ast.Call):
            return None
        name = self.resolve(node.func)
        if name and name.startswith(TL):
            return name[len(TL) :].removeprefix("math.")
        return None

    def is_tl(self, node: ast.AST | None, *names: str) -> bool:
        return self.tl_call(node) in names

    def tl(self, attr: str) -> str:
        """Source text that names triton.language.<attr> in this file."""
        return f"{self.tl_alias}.{attr}"

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(id(node))

    def fresh(self, base: str) -> str:
        used = {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)}
        used |= {a.arg for a in ast.walk(self.tree) if isinstance(a, ast.arg)}
        name, i = base, 1
        while name in used:
            i += 1
            name = f"{base}{i}"
        return name

    def launches(self) -> list[LaunchSite]:
        return self.ctx.module.launches_of(self.ctx.kernel)

    def node_at(self, site: LaunchSite) -> ast.Call:
        for node in ast.walk(self.tree):
            if (
                isinstance(node, ast.Call)
                and node.lineno == site.node.lineno
                and node.col_offset == site.node.col_offset
            ):
                return node
        raise Decline("cannot locate the launch site")

    def enclosing_statement(self, node: ast.AST) -> ast.stmt:
        while not isinstance(node, ast.stmt):
            node = self.parent(node)
            if node is None:
                raise Decline("expression outside a statement")
        return node

    def segment(self, node: ast.AST) -> str:
        if not hasattr(node, "lineno"):  # synthesised (e.g. the implicit 0 of `range(n)`)
            return ast.unparse(node)
        return self.text.text(node)


# ---------------------------------------------------------------------------------------------------------
def loaded_names(node: ast.AST | list[ast.AST]) -> set[str]:
    nodes = node if isinstance(node, list) else [node]
    return {n.id for root in nodes for n in ast.walk(root) if isinstance(n, ast.Name)}


def assigned_names(stmts: list[ast.stmt]) -> set[str]:
    out: set[str] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
    return out


def walk_statements(body: list[ast.stmt]) -> Iterator[tuple[ast.stmt, list[ast.stmt]]]:
    """Every statement with the body list that holds it, outer first."""
    for stmt in body:
        yield stmt, body
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from walk_statements(inner)


def first_loop_match(
    ks: KernelSource, try_at: Callable[[list[ast.stmt], int], list | None], nothing: str
) -> list:
    """try_at(body, i) at every `for` of the kernel, outer bodies first: the first match, or Decline with every
    loop's reason (or `nothing` when no loop said why)."""
    reasons = []
    bodies = [ks.fn.body] + [s.body for s, _ in walk_statements(ks.fn.body) if isinstance(s, ast.For | ast.While | ast.If)]
    for body in bodies:
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.For):
                try:
                    found = try_at(body, i)
                except Decline as exc:
                    reasons.append(str(exc))
                    continue
                if found:
                    return found
    raise Decline("; ".join(reasons) or nothing)


def simple_range(loop: ast.For) -> tuple[ast.expr, ast.expr, ast.expr | None] | None:
    """(start, stop, step) of `for v in range(...)` / `tl.range(...)` with a Name target, else None."""
    call = loop.iter
    if not isinstance(loop.target, ast.Name) or not isinstance(call, ast.Call) or call.keywords:
        return None
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name != "range" or not 1 <= len(call.args) <= 3 or loop.orelse:
        return None
    args = call.args
    if len(args) == 1:
        return ast.Constant(0), args[0], None
    return args[0], args[1], args[2] if len(args) == 3 else None


def literal_init(node: ast.AST) -> float | None:
    """The value of `0.0`, `0`, `-float("inf")`, `float("-inf")`, `-1e30` style initialisers."""
    try:
        value = ast.literal_eval(node)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    except (ValueError, SyntaxError, TypeError):
        pass
    sign = 1.0
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1.0, node.operand
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "float"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        try:
            return sign * float(node.args[0].value)
        except ValueError:
            return None
    return None


def arange_sizes(ks: KernelSource) -> dict[str, set[str]]:
    """For each name of the kernel: the sizes (source text) of the tl.arange blocks its value is built from,
    and "2d" when it was broadcast with None (a crude shape inference good enough to spot 1D blocks)."""
    sizes: dict[str, set[str]] = {}

    def of(expr: ast.AST) -> set[str]:
        return _sizes_of(ks, expr, sizes)

    for _ in range(2):  # loops feed names back into earlier statements
        for stmt, _body in walk_statements(ks.fn.body):
            if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                found = of(stmt.value)
                for target in targets:
                    for name in loaded_names(target):
                        sizes.setdefault(name, set()).update(found)
    return sizes


def _sizes_of(ks: KernelSource, expr: ast.AST, sizes: dict[str, set[str]]) -> set[str]:
    def of(expr: ast.AST) -> set[str]:
        out: set[str] = set()
        if ks.is_tl(expr, *REDUCTIONS):
            inner = set().union(*(of(arg) for arg in expr.args[:1]))
            return {"2d"} if "2d" in inner else set()  # a 1D block reduces to a scalar
        if ks.is_tl(expr, "arange") and len(expr.args) == 2:
            return {ks.segment(expr.args[1])}
        if isinstance(expr, ast.Name):
            return set(sizes.get(expr.id, set()))
        if isinstance(expr, ast.Subscript) and "None" in ks.segment(expr.slice):
            out.add("2d")
        elif ks.is_tl(expr, "zeros", "full") and expr.args:
            out.add("2d")  # explicit shapes: not followed
        for child in ast.iter_child_nodes(expr):
            out |= of(child)
        return out

    return of(expr)


def one_d_size(ks: KernelSource, expr: ast.AST, sizes: dict[str, set[str]]) -> str | None:
    """The block size of a 1D block expression, when exactly one tl.arange size feeds it and nothing is 2D."""
    found = _sizes_of(ks, expr, sizes)
    return next(iter(found)) if len(found) == 1 and "2d" not in found else None


def finish(
    recipe: object,
    ctx: RecipeContext,
    edits: list[Edit],
    title: str,
    rationale: str,
    *,
    config: dict | None = None,
) -> Candidate:
    """Apply the edits and check the result; raises Decline when the rewrite would not be valid Python."""
    if not edits:
        raise Decline("nothing to change")
    try:
        new_source = apply_edits(ctx.source, edits)
    except ValueError as exc:  # overlapping edits: a recipe bug must decline, never half-apply
        raise Decline(f"the rewrite's edits conflict ({exc})") from None
    try:
        tree = ast.parse(new_source)
    except SyntaxError as exc:  # a bug in the recipe must never reach the user
        raise Decline(f"the rewrite would not parse ({exc.msg}, line {exc.lineno})") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == ctx.kernel for n in ast.walk(tree)):
        raise Decline("the rewrite lost the kernel")
    keys = set(recipe.keys)
    matched = [f for f in ctx.findings if f.code in keys and f.kernel in (ctx.kernel, None)]
    evidence = tuple(sorted({f.code for f in matched}))
    level = max((int(f.level) for f in matched), default=1)
    return Candidate(
        source=new_source,
        origin="recipe",
        producer=recipe.name,
        kernel=ctx.kernel,
        title=title,
        rationale=rationale,
        evidence=evidence,
        level=level,
        config=dict(config or {}),
    )


def run_recipe(recipe: object, ctx: RecipeContext, build: callable) -> list[Candidate] | NotApplicable:
    """Call `build(ks)` (which returns candidates or raises Decline) and turn a Decline into NotApplicable."""
    try:
        ks = KernelSource(ctx)
        candidates = build(ks)
    except Decline as exc:
        return NotApplicable(recipe.name, str(exc))
    if not candidates:
        return NotApplicable(recipe.name, "the pattern was not found")
    return candidates


class SourceRecipe:
    """A recipe whose `build(recipe, ks)` returns candidates or raises Decline (one module defines one)."""

    def __init__(self, name: str, title: str, keys: tuple[str, ...], build: callable, summary: str = "") -> None:
        self.name = name
        self.title = title
        self.keys = keys
        self.summary = summary
        self._build = build

    def propose(self, ctx: RecipeContext) -> list[Candidate] | NotApplicable:
        try:
            candidates = self._build(self, KernelSource(ctx))
        except Decline as exc:
            return NotApplicable(self.name, str(exc))
        if not candidates:
            return NotApplicable(self.name, "the pattern was not found")
        return candidates

    def __repr__(self) -> str:
        return f"<recipe {self.name}>"


def previous_assignment(body: list[ast.stmt], before: ast.stmt, name: str) -> ast.stmt | None:
    """The last statement of `body` ahead of `before` that assigns `name` (anywhere inside it)."""
    found = None
    for stmt in body:
        if stmt is before:
            return found
        if name in assigned_names([stmt]):
            found = stmt
    return None


def count_name(nodes: list[ast.AST], name: str) -> int:
    return sum(1 for root in nodes for n in ast.walk(root) if isinstance(n, ast.Name) and n.id == name)


def axis_zero(ks: KernelSource, call: ast.Call) -> bool:
    """A reduction call over the whole of a 1D block: one positional operand, axis 0/None, nothing else."""
    args, keywords = call.args, call.keywords
    if len(args) == 2 and not keywords:
        return isinstance(args[1], ast.Constant) and args[1].value in (0, None)
    if len(args) != 1:
        return False
    if not keywords:
        return True
    return len(keywords) == 1 and keywords[0].arg == "axis" and isinstance(keywords[0].value, ast.Constant) and (
        keywords[0].value.value in (0, None)
    )


def block_size_text(ks: KernelSource, size: str) -> str:
    """`size` when it can be used anywhere in the kernel (a constexpr parameter or an int literal)."""
    if size.isdigit() or any(p.name == size and p.is_constexpr for p in ks.info.params):
        return size
    raise Decline(f"the block size {size} is not a constexpr parameter or a literal")


def paren(text: str) -> str:
    """Parenthesise an expression's text unless it is a name, call or subscript."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return f"({text})"
    return text if isinstance(node, ast.Name | ast.Call | ast.Subscript | ast.Constant | ast.Attribute) else f"({text})"


def substitute(ks: KernelSource, node: ast.AST, name: str, new: str) -> str:
    """The source text of `node` with every Name `name` inside it replaced by `new`."""
    start = ks.text.start(node)
    text = ks.segment(node)
    spans = sorted(
        (ks.text.start(n) - start, ks.text.end(n) - start)
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and n.id == name
    )
    for lo, hi in reversed(spans):
        text = text[:lo] + new + text[hi:]
    return text


def add_terms(node: ast.AST) -> list[ast.AST]:
    """The operands of a chain of `+` (not `-`: a subtracted term keeps its sign only inside the chain)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return add_terms(node.left) + add_terms(node.right)
    return [node]


def load_parts(ks: KernelSource, call: ast.Call) -> tuple[ast.AST, ast.AST | None, ast.AST | None]:
    """(pointer, mask, other) of a tl.load call; Decline on any other argument."""
    names = ("pointer", "mask", "other")
    parts: dict[str, ast.AST] = dict(zip(names, call.args, strict=False))
    for kw in call.keywords:
        if kw.arg not in names or kw.arg in parts:
            raise Decline(f"line {call.lineno}: tl.load with `{kw.arg}`")
        parts[kw.arg] = kw.value
    if len(call.args) > 3 or "pointer" not in parts:
        raise Decline(f"line {call.lineno}: unexpected tl.load arguments")
    return parts["pointer"], parts.get("mask"), parts.get("other")


def is_zero(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in (0, 0.0) and not isinstance(node.value, bool)


def grid_node(ks: KernelSource, call: ast.Call) -> ast.AST:
    """The grid expression of `kernel[grid](...)`, following a name assigned once in the same function."""
    grid = call.func.slice
    if isinstance(grid, ast.Name):
        scope = ks.enclosing_statement(call)
        while scope is not None and not isinstance(scope, ast.FunctionDef | ast.Module):
            scope = ks.parent(scope)
        assigns = [
            n for n in ast.walk(scope or ks.tree)
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == grid.id for t in n.targets)
        ]
        if len(assigns) != 1:
            raise Decline(f"the grid {grid.id} is not assigned exactly once")
        return assigns[0].value
    return grid


def additive_update(stmt: ast.stmt) -> tuple[str, ast.AST] | None:
    """(acc, value) for `acc += value` and `acc = acc + value`."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.BinOp)
        and isinstance(stmt.value.op, ast.Add)
        and isinstance(stmt.value.left, ast.Name)
        and stmt.value.left.id == stmt.targets[0].id
    ):
        return stmt.targets[0].id, stmt.value.right
    return None


def append_argument(ks: KernelSource, call: ast.Call, text: str) -> Edit:
    """An edit adding `text` (e.g. `num_warps=8`) as the call's last argument, trailing comma or not."""
    close = ks.text.end(call) - 1
    before = ks.text.source[:close].rstrip()
    sep = " " if before.endswith(",") or before.endswith("(") else ", "
    return Edit(close, close, f"{sep}{text}")


def imported_as(ks: KernelSource, module: str) -> str:
    """The name under which the file imports `module` (`import torch as th` -> "th")."""
    for node in ast.walk(ks.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == module:
                    return alias.asname or module
    raise Decline(f"the file does not `import {module}` (the rewritten launch needs it)")


def launches_for_new_parameter(ks: KernelSource) -> list[LaunchSite]:
    """The kernel's launch sites, when a parameter can be appended to it: none defaulted, keyword-only or
    variadic (the new last parameter is then passed by keyword at every launch in the file)."""
    args = ks.fn.args
    if args.defaults or args.kw_defaults or args.vararg or args.kwarg or args.kwonlyargs:
        raise Decline("the kernel has defaulted, keyword-only or variadic parameters")
    sites = ks.launches()
    if not sites:
        raise Decline("no launch of the kernel in this file")
    return sites


def and_mask(ks: KernelSource, call: ast.Call, extra: str) -> Edit:
    """The tl.load / tl.store / tl.atomic_* call with `extra` and-ed into its mask (or added as the mask)."""
    index = 1 if ks.tl_call(call) == "load" else 2
    mask = call.args[index] if len(call.args) > index else None
    mask = mask or next((k.value for k in call.keywords if k.arg == "mask"), None)
    if mask is not None:
        return ks.text.replace(mask, f"({ks.segment(mask)}) & {extra}")
    if len(call.args) > index:
        raise Decline(f"line {call.lineno}: unexpected positional arguments")
    return append_argument(ks, call, f"mask={extra}")
