"""Give each program a block of rows instead of one; a matrix-vector product per row becomes one `tl.dot`.

A kernel with one program per row (`row = tl.program_id(a)`) that multiplies its row vector into a loaded tile and
sums (`tl.sum(x[None, :] * w, axis=1)`, or `tl.sum(p[:, None] * w, axis=0)`: TL133) reads the whole tile again in
every program and runs on the FMA units; a kernel whose programs do a few scalar loads each (TL211) spends its time
launching programs (TL211 measured; TL104/TL105 one element per program); one that adds every program's value into
one address (TL132, TL112) serialises on that atomic.

The rewrite lifts every value that depends on the row by one leading dimension of BLOCK_ROWS rows: the row becomes
the column `(pid * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS))[:, None]`, so per-row scalars become (BLOCK_ROWS, 1)
columns and per-row vectors (BLOCK_ROWS, n) tiles by broadcasting alone; reductions of a per-row vector reduce
`axis=1, keep_dims=True`; the two matrix-vector forms become `tl.dot(x, tl.trans(w))` and `tl.dot(p, w)` (the
tile is read once per block of rows, on tensor cores); literal initial values of per-row accumulators get the
column or tile shape; every load, store and atomic whose address depends on the row is masked by the row bound;
an atomic of a per-row value into a fixed address adds the block's masked sum once. The launch starts
cdiv(rows, BLOCK_ROWS) programs on that grid axis and passes the old row count.

Declines: no program id assigned alone at the top, a row used in loop bounds or branches, a per-row value of
rank 2 outside the two matrix-vector forms, reductions of per-row values over other axes, per-row values
broadcast by hand (`x[None, :]`) elsewhere, a grid that is not a tuple in the file.
"""

from __future__ import annotations

import ast

from ..kernel_patterns import REDUCTIONS, axis_zero, literal_init, loaded_names, walk_statements
from ..recipe_edits import and_mask, append_argument, imported_as, launch_grids
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit

ROWS_CHOICES = (64, 16)  # per-row vectors: 64 is a warp group's wgmma tile on sm_90, 16 the smallest tl.dot tile
SCALAR_ROWS_CHOICES = (1024, 128)  # only per-row scalars: a block the size of an elementwise kernel's
SMALL_PROGRAMS = ("TL211", "TL104", "TL105", "TL132", "TL112")  # evidence for rows per program without a matvec
VECTOR_TILE = 4096  # per-row vectors without a matvec: rows x width up to this many elements per program
MEMORY = ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas", "atomic_and",
          "atomic_or", "atomic_xor")
ADDITIVE_ATOMICS = ("atomic_add",)


def _slice_pattern(node: ast.AST) -> str | None:
    """"row" for `x[None, :]`, "col" for `x[:, None]`, else None."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple) or len(node.slice.elts) != 2:
        return None
    a, b = node.slice.elts
    none = lambda n: isinstance(n, ast.Constant) and n.value is None  # noqa: E731
    full = lambda n: isinstance(n, ast.Slice) and n.lower is None and n.upper is None and n.step is None  # noqa: E731
    if none(a) and full(b):
        return "row"
    if full(a) and none(b):
        return "col"
    return None


def _axis(call: ast.Call) -> object:
    if len(call.args) >= 2:
        return call.args[1].value if isinstance(call.args[1], ast.Constant) else "?"
    kw = next((k for k in call.keywords if k.arg == "axis"), None)
    return kw.value.value if kw is not None and isinstance(kw.value, ast.Constant) else (None if kw is None else "?")


class _Shapes:
    """Which names depend on the row (taint) and the rank each name has in the original kernel (0, 1 or 2)."""

    def __init__(self, ks: KernelSource, row: str) -> None:
        self.ks = ks
        self.tainted = {row}
        self.rank: dict[str, int] = {}
        assigns = [(s, b) for s, b in walk_statements(ks.fn.body) if isinstance(s, ast.Assign | ast.AugAssign)]
        for _ in range(4):  # loop-carried values feed earlier statements
            for stmt, _body in assigns:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                names = {n for t in targets for n in loaded_names(t)}
                if isinstance(stmt, ast.AugAssign):
                    names_in = loaded_names(stmt.value) | names
                else:
                    names_in = loaded_names(stmt.value)
                if names_in & self.tainted:
                    self.tainted |= names
                r = self.rank_of(stmt.value)
                for name in names:
                    self.rank[name] = max(self.rank.get(name, 0), r)

    def is_tainted(self, node: ast.AST) -> bool:
        return bool(loaded_names(node) & self.tainted)

    def matvec(self, node: ast.AST) -> tuple[str, ast.AST, ast.AST] | None:
        """("xwT", x, w) for tl.sum(x[None, :] * w, axis=1); ("pw", p, w) for tl.sum(p[:, None] * w, axis=0),
        with x / p per-row vectors and w a 2D tile that does not depend on the row."""
        ks = self.ks
        if not (ks.is_tl(node, "sum") and node.args and isinstance(node.args[0], ast.BinOp)):
            return None
        product = node.args[0]
        if not isinstance(product.op, ast.Mult) or len(node.args) + len(node.keywords) != 2:
            return None
        axis = _axis(node)
        for vec, tile in ((product.left, product.right), (product.right, product.left)):
            kind = _slice_pattern(vec)
            if kind is None or not self.is_tainted(vec.value) or self.is_tainted(tile):
                continue
            if self.rank_of(vec.value) != 1 or self.rank_of(tile) != 2:
                continue
            if (kind, axis) == ("row", 1):
                return "xwT", vec.value, tile
            if (kind, axis) == ("col", 0):
                return "pw", vec.value, tile
        return None

    def rank_of(self, node: ast.AST) -> int:
        ks = self.ks
        if isinstance(node, ast.Name):
            return self.rank.get(node.id, 0)
        if isinstance(node, ast.Constant):
            return 0
        if isinstance(node, ast.Subscript):
            kind = _slice_pattern(node)
            return 2 if kind else self.rank_of(node.value)
        if isinstance(node, ast.Call):
            if self.matvec(node):
                return 1
            if ks.is_tl(node, "arange"):
                return 1
            if ks.is_tl(node, "program_id", "num_programs"):
                return 0
            if ks.is_tl(node, "dot", "trans"):
                return 2
            if ks.is_tl(node, "zeros", "full") and node.args and isinstance(node.args[0], ast.Tuple | ast.List):
                return len(node.args[0].elts)
            if ks.is_tl(node, *REDUCTIONS) and node.args:
                inner = self.rank_of(node.args[0])
                keep = any(k.arg == "keep_dims" for k in node.keywords)
                return inner if keep else (0 if _axis(node) is None else max(inner - 1, 0))
            if ks.is_tl(node, "load") and node.args:
                return self.rank_of(node.args[0])
            if isinstance(node.func, ast.Attribute) and ks.tl_call(node) is None:  # x.to(...), x.cast(...)
                return self.rank_of(node.func.value)
            return max([self.rank_of(a) for a in node.args] + [0])
        return max([self.rank_of(c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)] + [0])


def _launch_int(ks: KernelSource, calls: list[ast.Call], name: str) -> int | None:
    """The largest integer literal passed for parameter `name` at the launches; None when any is not a literal."""
    params = [a.arg for a in ks.fn.args.args]
    found = []
    for call in calls:
        node = next((k.value for k in call.keywords if k.arg == name), None)
        if node is None and name in params and params.index(name) < len(call.args):
            node = call.args[params.index(name)]
        if not (isinstance(node, ast.Constant) and type(node.value) is int):
            return None
        found.append(node.value)
    return max(found, default=None)


def _rows_for_vectors(ks: KernelSource, grids: list[tuple[ast.Call, ast.AST]]) -> tuple[int, ...]:
    """Rows per program when every program holds per-row vectors (no matvec): keep rows x the widest vector
    within VECTOR_TILE elements; ROWS_CHOICES when the vector width is not a literal anywhere."""
    widths = []
    for node in ast.walk(ks.fn):
        if ks.is_tl(node, "arange") and len(node.args) == 2:
            size = node.args[1]
            value = size.value if isinstance(size, ast.Constant) and type(size.value) is int else (
                _launch_int(ks, [c for c, _ in grids], size.id) if isinstance(size, ast.Name) else None)
            if value is None:
                return ROWS_CHOICES
            widths.append(value)
    width = max(widths, default=1)
    if width * 2 > VECTOR_TILE:
        raise Decline(f"per-row vectors of {width} elements already fill a program")
    return tuple(sorted({max(2, VECTOR_TILE // width), max(2, VECTOR_TILE // 8 // width)}, reverse=True))


def _row_statement(ks: KernelSource) -> tuple[ast.Assign, ast.Call, str]:
    """The `row = tl.program_id(a)` statement at the top level whose row feeds a matvec, atomic or load."""
    found = []
    for stmt in ks.fn.body:
        if (
            isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and ks.is_tl(stmt.value, "program_id") and stmt.value.args
            and isinstance(stmt.value.args[0], ast.Constant) and isinstance(stmt.value.args[0].value, int)
        ):
            found.append((stmt, stmt.value, stmt.targets[0].id))
    if not found:
        raise Decline("no `row = tl.program_id(axis)` assigned alone at the top of the kernel")
    for stmt, call, row in found:
        shapes = _Shapes(ks, row)
        if any(shapes.matvec(n) for n in ast.walk(ks.fn)):
            return stmt, call, row
    return found[0]


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    fn = ks.fn
    row_stmt, pid, row = _row_statement(ks)
    axis = pid.args[0].value
    shapes = _Shapes(ks, row)
    if sum(1 for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == row and isinstance(n.ctx, ast.Store)) != 1:
        raise Decline(f"`{row}` is assigned more than once")
    for node in ast.walk(fn):
        if isinstance(node, ast.For | ast.While) and shapes.is_tainted(node.iter if isinstance(node, ast.For) else node.test):
            raise Decline(f"line {node.lineno}: the loop bounds depend on the row")
        if isinstance(node, ast.If | ast.IfExp | ast.Return) and (
            isinstance(node, ast.Return) or shapes.is_tainted(node.test)
        ):
            raise Decline(f"line {node.lineno}: the kernel branches or returns")
    matvecs = {id(n): shapes.matvec(n) for n in ast.walk(fn) if shapes.matvec(n)}
    inside: set[int] = {id(c) for n in ast.walk(fn) if id(n) in matvecs for c in ast.walk(n) if c is not n}
    tl = ks.tl
    edits_common: list[Edit] = []
    atomics_to_fixed: list[ast.Call] = []
    for node in ast.walk(fn):
        if id(node) in inside or id(node) in matvecs:
            continue
        if isinstance(node, ast.expr) and shapes.is_tainted(node) and shapes.rank_of(node) >= 2:
            raise Decline(f"line {node.lineno}: `{ks.segment(node)[:60]}` is a 2D value that depends on the row")
        if isinstance(node, ast.Subscript) and _slice_pattern(node) and shapes.is_tainted(node.value):
            raise Decline(f"line {node.lineno}: a per-row value broadcast by hand outside a matrix-vector product")
        if ks.is_tl(node, *REDUCTIONS) and node.args and shapes.is_tainted(node.args[0]):
            if not ks.is_tl(node, "sum", "max", "min") or shapes.rank_of(node.args[0]) != 1 or not axis_zero(ks, node):
                raise Decline(f"line {node.lineno}: a reduction of a per-row value this recipe cannot lift")
            edits_common.append(ks.text.replace(
                node, f"{ks.segment(node.func)}({ks.segment(node.args[0])}, axis=1, keep_dims=True)"))
        if ks.is_tl(node, *MEMORY) and node.args:
            if shapes.is_tainted(node.args[0]):
                edits_common.append(("mask", node))
            elif ks.tl_call(node) != "load" and len(node.args) > 1 and shapes.is_tainted(node.args[1]):
                if ks.tl_call(node) not in ADDITIVE_ATOMICS or len(node.args) > 2 or node.keywords:
                    raise Decline(f"line {node.lineno}: a per-row value stored to an address that does not depend on it")
                if shapes.rank_of(node.args[1]) != 0:
                    raise Decline(f"line {node.lineno}: a per-row vector added into a fixed address")
                atomics_to_fixed.append(node)
    if not matvecs and not atomics_to_fixed and not any(
        ks.is_tl(n, "load") and n.args and shapes.is_tainted(n.args[0]) for n in ast.walk(fn)
    ):
        raise Decline(f"nothing in the kernel depends on `{row}` through memory: no block of rows to share")
    codes = {f.code for f in ks.ctx.findings if f.kernel in (ks.ctx.kernel, None)}
    if not matvecs and not codes & set(SMALL_PROGRAMS):
        raise Decline("no per-row matrix-vector product, and no evidence of tiny programs (TL211, TL104, TL105) or "
                      "of one contended address (TL132, TL112) that blocks of rows would relieve")
    if not matvecs:
        sizes = {ks.segment(n.args[1]) for n in ast.walk(fn) if ks.is_tl(n, "arange") and len(n.args) == 2}
        for node in ast.walk(fn):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                pair = {ks.segment(node.left), ks.segment(node.right)}
                if row in pair and pair - {row} <= sizes:
                    raise Decline(f"line {node.lineno}: `{row}` already indexes a block of elements "
                                  f"(`{ks.segment(node)}`): a larger block is block-size-warps' move, not more rows")
    # per-row names first assigned a value that does not depend on the row: literal accumulators
    inits: list[tuple[ast.Assign, str]] = []
    for stmt, _body in walk_statements(fn.body):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        name = stmt.targets[0].id
        if name not in shapes.tainted or name == row or shapes.is_tainted(stmt.value):
            continue
        value = stmt.value
        if literal_init(value) is not None:
            inits.append((stmt, "col"))
        elif ks.is_tl(value, "zeros", "full") and value.args and isinstance(value.args[0], ast.Tuple | ast.List) \
                and len(value.args[0].elts) == 1:
            inits.append((stmt, "vec"))
        else:
            raise Decline(f"line {stmt.lineno}: `{name}` starts from a value this recipe cannot give one row each")
    launches = launch_grids(ks)
    triton = imported_as(ks, "triton")
    grids = []
    for call, grid in launches:
        if not isinstance(grid, ast.Tuple) or axis >= len(grid.elts):
            raise Decline(f"the grid at line {call.lineno} is not a tuple with axis {axis}")
        grids.append((call, grid.elts[axis]))
    total, ok, rows_name = ks.fresh("n_rows_total"), ks.fresh(f"{row}_ok"), ks.fresh("BLOCK_ROWS")
    candidates = []
    vectors = any(shapes.rank.get(n, 0) >= 1 for n in shapes.tainted)
    choices = ROWS_CHOICES if matvecs else _rows_for_vectors(ks, grids) if vectors else SCALAR_ROWS_CHOICES
    for rows in choices:
        indent = ks.text.indent(row_stmt)
        edits: list[Edit] = [
            ks.text.replace(pid, f"({ks.segment(pid)} * {rows_name} + {tl('arange')}(0, {rows_name}))[:, None]"),
            ks.text.insert_after(row_stmt, f"{indent}{ok} = {row} < {total}\n"),
        ]
        for item in edits_common:
            edits.append(and_mask(ks, item[1], ok) if isinstance(item, tuple) else item)
        for node_id, (kind, vec, tile) in matvecs.items():
            node = next(n for n in ast.walk(fn) if id(n) == node_id)
            a, w = ks.segment(vec), ks.segment(tile)
            dot = f"{tl('dot')}({a}, {tl('trans')}({w}))" if kind == "xwT" else f"{tl('dot')}({a}, {w})"
            edits.append(ks.text.replace(node, dot))
        for call in atomics_to_fixed:
            value = ks.segment(call.args[1])
            edits.append(ks.text.replace(call.args[1], f"{tl('sum')}({tl('where')}({ok}, {value}, 0))"))
        for stmt, kind in inits:
            value = stmt.value
            if kind == "col":
                exact = isinstance(value, ast.Constant) and type(value.value) is int
                dtype = tl("int32") if exact else tl("float32")
                edits.append(ks.text.replace(value, f"{tl('full')}(({rows_name}, 1), {ks.segment(value)}, dtype={dtype})"))
            else:
                shape = value.args[0]
                edits.append(ks.text.replace(shape, f"({rows_name}, {ks.segment(shape.elts[0])})"))
        for call, count in grids:
            edits.append(ks.text.replace(count, f"{triton}.cdiv({ks.segment(count)}, {rows})"))
            edits.append(append_argument(ks, call, f"{total}={ks.segment(count)}, {rows_name}={rows}"))
        last = fn.args.args[-1]
        edits.append(Edit(ks.text.end(last), ks.text.end(last), f", {total}, {rows_name}: {ks.tl_alias}.constexpr"))
        what = f"{len(matvecs)} matrix-vector product(s) become tl.dot" if matvecs else "per-row work is shared"
        rationale = (
            f"One program handled one `{row}`. Each program now handles {rows} rows: per-row values gain a leading "
            f"dimension, {what}" + (", the fixed-address atomic adds one masked block sum" if atomics_to_fixed else "")
            + f"; every row-dependent access is masked by `{ok}` and the launch starts cdiv(rows, {rows}) programs."
        )
        candidates.append(finish(recipe, ks.ctx, edits, f"Blocks of {rows} rows per program"
                                 + (" with tl.dot" if matvecs else ""), rationale, config={"BLOCK_ROWS": rows}))
    return candidates


RECIPE = SourceRecipe(
    name="row-blocks",
    title="Blocks of rows per program; per-row matrix-vector products as tl.dot",
    keys=("TL133", *SMALL_PROGRAMS),
    build=_build,
)
