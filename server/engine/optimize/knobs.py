"""The tunable values of a file's kernel launches, located in the text: constexpr block sizes given as integer
literals (at the launch, or through a local assigned once), `num_warps` / `num_stages` / `maxnreg` (CUDA) or
`multibuffer` (Ascend) at the launch, present or insertable.

A block size that also sizes the grid (`triton.cdiv(n, 64)` on the grid axis whose `tl.program_id` the kernel
multiplies by that block) moves together with it; literals shared between launches (one `grid` for two kernels)
are merged into one knob, so a move never leaves a launch covering less than its data. Pure functions over text.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ....analysis.rewrite.source_edit import SourceText


@dataclass(frozen=True)
class Loc:
    start: int  # character offsets into the source
    end: int


@dataclass
class Knob:
    label: str  # "row_sum_kernel.BLOCK_SIZE", "row_sum_kernel.num_warps"
    kind: str  # "block" | "num_warps" | "num_stages" | "maxnreg" | "multibuffer"
    value: Any  # the current value
    locs: list[Loc] = field(default_factory=list)  # literal(s) to replace
    inserts: list[int] = field(default_factory=list)  # where `, name=value` goes at launches that omit it
    insert_name: str = ""
    kernels: set[str] = field(default_factory=set)
    has_loop: bool = False  # the kernel loops (num_stages matters)
    grid_axis: int | None = None  # blocks: the grid axis whose program id it multiplies (a tile dimension)
    lane: bool = True  # blocks: sizes a `tl.arange` (False: a group width or other count the kernel steps by)
    dot_loop: bool = False  # the kernel feeds tl.dot inside a loop (a GEMM-like main loop)

    def edits(self, value: Any, source: str) -> list[tuple[int, int, str]]:
        out = [(loc.start, loc.end, repr(value)) for loc in self.locs]
        for at in self.inserts:
            sep = "" if source[:at].endswith("(") else ", "
            out.append((at, at, f"{sep}{self.insert_name}={value!r}"))
        return out


def apply_edits(source: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, text in sorted(set(edits), reverse=True):
        source = source[:start] + text + source[end:]
    return source


class _Text(SourceText):
    """AST positions as character offsets: Python's lines (not `str.splitlines`', which also break at form feeds
    and U+2028) and columns converted from UTF-8 bytes (ast's unit), as the rewrites' SourceText counts them."""

    def loc(self, node: ast.AST) -> Loc:
        return Loc(self.start(node), self.end(node))


def _int_const(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _assignments(scope: ast.AST) -> dict[str, list[ast.AST]]:
    out: dict[str, list[ast.AST]] = {}
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append(node.value)
                elif isinstance(target, (ast.Tuple, ast.List)):  # `BLOCK_M, BLOCK_N = 128, 64`: element by element
                    values = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else None
                    for i, element in enumerate(target.elts):
                        if isinstance(element, ast.Name):
                            paired = values is not None and len(values) == len(target.elts)
                            out.setdefault(element.id, []).append(values[i] if paired else node)  # type: ignore[index]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            out.setdefault(node.target.id, []).append(node.value or node)
    return out


def _resolve(node: ast.AST, assigned: dict[str, list[ast.AST]]) -> ast.AST:
    if isinstance(node, ast.Name) and len(assigned.get(node.id, [])) == 1:
        return assigned[node.id][0]
    return node


_INDEX_CALLS = ("program_id", "to", "min", "max", "minimum", "maximum", "cdiv", "multiple_of")


def _scalar_index(node: ast.AST) -> bool:
    """Integer index arithmetic only (names, constants, + - * // %, min/max/cdiv, `.to`): the expressions that
    carry a program id into a tile index (grouped program order), not loads or tensors built from it."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            if getattr(n.func, "attr", getattr(n.func, "id", "")) not in _INDEX_CALLS:
                return False
        elif not isinstance(n, (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Attribute, ast.operator,
                                ast.unaryop, ast.Load, ast.keyword)):
            return False
    return True


def _program_axes(kernel: ast.FunctionDef) -> dict[str, int]:
    """constexpr name -> grid axis, from `pid = tl.program_id(k)` ... `pid * NAME` in the kernel body, where the
    multiplied index may come from the program id through scalar index arithmetic (`pid_m = first_m + pid % g`)."""

    def axis_of(node: ast.AST) -> int | None:
        while isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "to":  # tl.program_id(0).to(...)
            node = node.func.value  # type: ignore[attr-defined]
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "program_id":
            arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
            return arg.value if _int_const(arg) else None  # type: ignore[union-attr]
        return None

    assigns = [n for n in ast.walk(kernel) if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name)]
    pids: dict[str, int] = {}
    for node in assigns:
        axis = axis_of(node.value)
        if axis is not None:
            pids[node.targets[0].id] = axis  # type: ignore[attr-defined]
    changed = True
    while changed:  # names computed from a program id by index arithmetic carry its axis (the first one seen)
        changed = False
        for node in assigns:
            name = node.targets[0].id  # type: ignore[attr-defined]
            if name in pids or not _scalar_index(node.value):
                continue
            axis = next((pids[n.id] for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id in pids), None)
            if axis is not None:
                pids[name] = axis
                changed = True
    out: dict[str, int] = {}
    for node in ast.walk(kernel):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for a, b in ((node.left, node.right), (node.right, node.left)):
                axis = pids.get(a.id) if isinstance(a, ast.Name) else axis_of(a)
                if axis is not None and isinstance(b, ast.Name):
                    out.setdefault(b.id, axis)
    return out


def is_block(fn: ast.FunctionDef, name: str) -> bool:
    """`name` sizes a block: `tl.arange(0, name)` (directly) in the kernel. A constexpr that sizes no block (a
    program-group width, a flag) is not a tile dimension."""
    return any(isinstance(n, ast.Call) and ast.unparse(n.func).split(".")[-1] == "arange" and len(n.args) == 2
               and isinstance(n.args[1], ast.Name) and n.args[1].id == name for n in ast.walk(fn))


def _grid_literals(grid: ast.AST, axis: int, value: int, assigned: dict[str, list[ast.AST]]) -> list[ast.AST]:
    grid = _resolve(grid, assigned)
    if isinstance(grid, ast.Tuple):
        if axis >= len(grid.elts):
            return []
        element: ast.AST = grid.elts[axis]
    elif axis == 0:
        element = grid
    else:
        return []
    found = []
    for node in ast.walk(element):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "cdiv":
            if len(node.args) == 2 and _int_const(node.args[1]) and node.args[1].value == value:  # type: ignore[attr-defined]
                found.append(node.args[1])
    return found


def _scopes(tree: ast.Module) -> list[ast.AST]:
    return [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]


def find_knobs(source: str, kernel_params: dict[str, list[tuple[str, bool]]], platform: str = "cuda") -> list[Knob]:
    """kernel_params: kernel name -> [(param name, is_constexpr)] in order (from analysis.kernels)."""
    tree = ast.parse(source)
    text = _Text(source)
    defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in kernel_params}
    scopes = _scopes(tree)  # outer before inner (breadth first): the innermost scope is recorded last
    owner: dict[int, ast.AST] = {id(child): scope for scope in scopes for child in ast.walk(scope)}
    knobs: list[Knob] = []
    for scope in scopes:
        assigned = _assignments(scope)
        for call in (n for n in ast.walk(scope) if owner[id(n)] is scope):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript)):
                continue
            name = call.func.value.id if isinstance(call.func.value, ast.Name) else None
            if name not in kernel_params or name not in defs:
                continue
            knobs.extend(_launch_knobs(call, name, kernel_params[name], defs[name], assigned, text, platform))
    return _merge(knobs)


def _launch_knobs(
    call: ast.Call,
    kernel: str,
    params: list[tuple[str, bool]],
    kdef: ast.FunctionDef,
    assigned: dict[str, list[ast.AST]],
    text: _Text,
    platform: str,
) -> list[Knob]:
    bound: dict[str, ast.AST] = {}
    for (pname, _), arg in zip(params, call.args, strict=False):
        if isinstance(arg, ast.Starred):
            break
        bound[pname] = arg
    options: dict[str, ast.AST] = {}
    for kw in call.keywords:
        if kw.arg is None:
            return []  # **kwargs: the launch's values are not in the text
        (bound if any(kw.arg == p for p, _ in params) else options)[kw.arg] = kw.value
    axes = _program_axes(kdef)
    has_loop = any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(kdef))
    dot_loop = any(
        isinstance(n, (ast.For, ast.While)) and any(
            isinstance(c, ast.Call) and getattr(c.func, "attr", getattr(c.func, "id", "")) == "dot" for c in ast.walk(n)
        )
        for n in ast.walk(kdef)
    )
    out: list[Knob] = []
    for pname, is_constexpr in params:
        node = bound.get(pname)
        if not is_constexpr or node is None:
            continue
        lit = _resolve(node, assigned)
        if not _int_const(lit) or lit.value < 2 or lit.value & (lit.value - 1):  # type: ignore[attr-defined]
            continue  # only power-of-two integer literals are block sizes we may move
        value = lit.value  # type: ignore[attr-defined]
        locs = [text.loc(lit)]
        if lit is node and pname in axes:  # a literal at the launch: the grid may repeat it
            locs += [text.loc(g) for g in _grid_literals(call.func.slice, axes[pname], value, assigned)]  # type: ignore[attr-defined]
        out.append(Knob(f"{kernel}.{pname}", "block", value, locs, kernels={kernel}, has_loop=has_loop,
                        grid_axis=axes.get(pname), lane=is_block(kdef, pname), dot_loop=dot_loop))
    names = ("multibuffer",) if platform == "ascend" else ("num_warps", "num_stages", "maxnreg")
    defaults = {"num_warps": 4, "num_stages": 3, "multibuffer": True, "maxnreg": None}
    last = [*call.args, *(kw.value for kw in call.keywords)]
    end = text.loc(last[-1]).end if last else text.loc(call).end - 1  # after the last argument
    for opt in names:
        node = options.get(opt)
        if node is None:
            out.append(Knob(f"{kernel}.{opt}", opt, defaults[opt], [], [end], opt, {kernel}, has_loop,
                            dot_loop=dot_loop))
            continue
        lit = _resolve(node, assigned)
        if isinstance(lit, ast.Constant) and (type(lit.value) in (int, bool) or (opt == "maxnreg" and lit.value is None)):
            out.append(Knob(f"{kernel}.{opt}", opt, lit.value, [text.loc(lit)], [], opt, {kernel}, has_loop,
                            dot_loop=dot_loop))
    return out


def _merge(knobs: list[Knob]) -> list[Knob]:
    """Knobs that share a literal (one grid for two launches) become one knob moving all their literals, and so do
    the same knob of one kernel at several launch sites with the same value (a forward and a backward wrapper):
    moving it at one site only would make the sites disagree, which no replay of recorded launches can check
    (a record does not say which site launched it)."""
    merged: list[Knob] = []
    for knob in knobs:
        partner = next(
            (m for m in merged if m.kind == knob.kind and m.value == knob.value
             and (set(m.locs) & set(knob.locs) or m.label == knob.label)),
            None,
        )
        if partner is None:
            merged.append(knob)
            continue
        partner.inserts = sorted(set(partner.inserts) | set(knob.inserts))
        partner.locs = sorted(set(partner.locs) | set(knob.locs), key=lambda loc: loc.start)
        partner.kernels |= knob.kernels
        partner.label = " + ".join(dict.fromkeys([*partner.label.split(" + "), knob.label]))
        partner.has_loop = partner.has_loop or knob.has_loop
    return merged
