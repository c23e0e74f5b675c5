"""Shared by the tl.dot schedules: the model of one kernel seen at its main loop, index roles, bounds, rebinding
the user's index names to the new tiles, and the rewritten kernel head and launch.

`LoopView` lifts the kernel (analysis/computation) and keeps what a re-emission needs besides the model: the
values of the names just before the main loop and every comparison the kernel makes (where its bounds are).
Index variables get *roles* from the accesses they address: M (operand A and the output, not B), N (B and the
output), K (A and B, not the output), batch (all three). A role's element index is a combination of its
variables (`pid * BLOCK_M + lanes`, or one program id in a scalar kernel) read off the operand's strides, so
transposed operands and any spelling of the offsets give the same roles. Nothing here names a variable.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ...computation.lift import Lifter
from ...computation.model import LANE, LOOP, PROGRAM, Access, Computation
from ...computation.symbolic import Poly
from ...computation.values import Index
from ..kernel_patterns import grid_node, is_zero
from ..recipe_kit import Decline, KernelSource
from ..source_edit import Edit, apply_edits

M, N, K, BATCH = "M", "N", "K", "batch"


# -- the model at the main loop ---------------------------------------------------------------------------------
@dataclass
class Compare:
    op: type
    left: Index
    right: Index
    loose: bool = False  # under `|`, `or`, `^`, `~` or `not`: the mask it builds is not this comparison's bound


class _Recorder(Lifter):
    """The lifter, also keeping the environment before one loop statement and every comparison."""

    def __init__(self, module, kernel, loop_line: int, any_statement: bool = False) -> None:  # noqa: ANN001
        super().__init__(module, kernel)
        self.loop_line = loop_line
        self.any_statement = any_statement  # record before the statement on loop_line, loop or not
        self.before_loop: dict | None = None
        self.compares: list[Compare] = []
        self.opaque_compares: list[int] = []  # lines of comparisons with a side that is not an affine index
        self._loose = 0  # depth of `|`/`or`/`^`/`~`/`not` around the expression being lifted

    def stmt(self, s: ast.stmt, env: dict):  # noqa: ANN201
        if (isinstance(s, ast.For) or self.any_statement) and s.lineno == self.loop_line and self.recording and \
                self.before_loop is None:
            self.before_loop = dict(env)
        return super().stmt(s, env)

    def expr(self, e: ast.expr | None, env: dict):  # noqa: ANN201
        if isinstance(e, ast.Compare) and len(e.ops) == 1 and self.recording:
            with self.silent():
                left, right = self.expr(e.left, env), self.expr(e.comparators[0], env)
            if isinstance(left, Index) and isinstance(right, Index) and left.expr and right.expr:
                self.compares.append(Compare(type(e.ops[0]), left, right, self._loose > 0))
            else:
                self.opaque_compares.append(e.lineno)
        if _loosens(e):
            self._loose += 1
            try:
                return super().expr(e, env)
            finally:
                self._loose -= 1
        return super().expr(e, env)


def _loosens(e: ast.expr | None) -> bool:
    """An operator after which a comparison no longer bounds what it compares (`(j < P) | (j <= i)`)."""
    return (isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitOr, ast.BitXor))) or (
        isinstance(e, ast.BoolOp) and isinstance(e.op, ast.Or)) or (
        isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.Invert, ast.Not)))


@dataclass
class LoopView:
    comp: Computation
    before_loop: dict
    compares: list[Compare]
    opaque_compares: list[int] = field(default_factory=list)

    @staticmethod
    def of(ks: KernelSource, loop_line: int) -> LoopView:
        rec = _Recorder(ks.ctx.module, ks.info, loop_line)
        try:
            comp = rec.run()
        except Exception as exc:  # the lifter's own failure is a reason, never a crash
            raise Decline(f"the kernel could not be lifted ({type(exc).__name__}: {exc})") from None
        if rec.before_loop is None:
            raise Decline("the main loop is not a statement of the kernel's body")
        return LoopView(comp, rec.before_loop, rec.compares, rec.opaque_compares)


def names_before(ks: KernelSource, line: int) -> dict:
    """The lifted value of every name in scope just before the statement on `line` (inside loops too)."""
    rec = _Recorder(ks.ctx.module, ks.info, line, any_statement=True)
    try:
        rec.run()
    except Exception as exc:  # the lifter's own failure is a reason, never a crash
        raise Decline(f"the kernel could not be lifted ({type(exc).__name__}: {exc})") from None
    return rec.before_loop or {}


# -- polynomials as source text -----------------------------------------------------------------------------
def poly_text(p: Poly, name: callable = lambda n: n) -> str:
    """Python text of a polynomial over kernel parameters; Decline when a monomial is not a parameter name."""
    if p.is_zero:
        return "0"
    parts = []
    for mono, c in p.terms:
        for n in mono:
            if not n.isidentifier():
                raise Decline(f"`{n}` in an index is not a parameter of the kernel")
        factors = [name(n) for n in mono]
        if c != 1 or not factors:
            factors.insert(0, str(c))
        parts.append(" * ".join(factors))
    return " + ".join(parts).replace("+ -", "- ")


def divide(p: Poly, d: Poly) -> Poly | None:
    """p / d when d is one monomial that divides every term of p exactly, else None."""
    if len(d.terms) != 1:
        return None
    (dm, dc), = d.terms
    out: dict[tuple[str, ...], int] = {}
    for mono, c in p.terms:
        rest = list(mono)
        for n in dm:
            if n not in rest:
                return None
            rest.remove(n)
        if c % dc:
            return None
        out[tuple(rest)] = out.get(tuple(rest), 0) + c // dc
    return Poly.from_dict(out)


# -- roles ---------------------------------------------------------------------------------------------------
@dataclass
class Role:
    name: str
    weights: dict[str, Poly]  # index variable -> its weight in the element index (`pid: BLOCK_M, lane: 1`)
    unit: str  # the variable of weight 1
    lane_extent: str | None = None  # source text of the lane's size, when the role has a lane


@dataclass
class Operand:
    access: Access
    strides: dict[str, Poly]  # role -> the stride of its element index in this tensor
    const: Poly


@dataclass
class Roles:
    of_var: dict[str, str] = field(default_factory=dict)
    roles: dict[str, Role] = field(default_factory=dict)


def assign_roles(comp: Computation, a: Access, b: Access, out: Access) -> Roles:
    va, vb, vc = set(a.offset.variables), set(b.offset.variables), set(out.offset.variables)
    result = Roles()
    for v in sorted(va | vb | vc):
        where = (v in va, v in vb, v in vc)
        role = {(True, True, True): BATCH, (True, False, True): M, (False, True, True): N,
                (True, True, False): K}.get(where)
        if role is None:
            var = comp.var(v)
            raise Decline(f"index `{(var.label if var else '') or v}` addresses only "
                          f"{', '.join(t for t, w in zip((a.tensor, b.tensor, out.tensor), where, strict=True) if w)}"
                          ": not a matmul index")
        result.of_var[v] = role
    for role, source in ((M, a), (N, b)):
        own_batches(comp, result.of_var, role, source)
    for role, source in ((M, a), (N, b), (K, a), (BATCH, a)):
        vars_ = [v for v, r in result.of_var.items() if r == role]
        if not vars_:
            if role in (M, N, K):
                raise Decline(f"no index runs over the {role} axis of the product")
            continue
        if role == BATCH and any(a.offset.coefficient(v).is_zero for v in vars_):
            source = b  # a batch of B (and the output) only: A is shared by every batch
        result.roles[role] = role_of(comp, role, vars_, source)
    return result


def own_batches(comp: Computation, of_var: dict[str, str], role: str, source: Access) -> None:
    """Moves to BATCH the program ids of `role` whose step in `source` is no multiple of the role's lane stride.

    `a_ptr + pid_b * stride_ab + rows * stride_am` against a weight every batch shares: pid_b indexes A and the
    output only, like the rows, but its step is no multiple of the row stride, so it cannot be part of the row
    index: it selects a batch (or a head), kept as a program axis of its own, and the shared operand is read
    without it."""
    lanes = [v for v, r in of_var.items() if r == role and comp.var(v) and comp.var(v).kind == LANE]
    if len(lanes) != 1:
        return
    stride = source.offset.coefficient(lanes[0])
    for v, r in list(of_var.items()):
        if r == role and comp.var(v) and comp.var(v).kind == PROGRAM and \
                divide(source.offset.coefficient(v), stride) is None:
            of_var[v] = BATCH


def role_of(comp: Computation, role: str, vars_: list[str], access: Access) -> Role:
    """The role over `vars_`: its unit (the lane, or the one index) and each variable's weight in `access`."""
    lanes = [v for v in vars_ if (comp.var(v) and comp.var(v).kind == LANE)]
    if len(lanes) > 1:
        raise Decline(f"the {role} axis is spread over {len(lanes)} tl.arange lanes")
    if lanes:
        unit = lanes[0]
    elif len(vars_) == 1:
        unit = vars_[0]
    else:
        raise Decline(f"the {role} axis combines {len(vars_)} indices and no lane")
    stride = access.offset.coefficient(unit)
    weights = {}
    for v in vars_:
        w = divide(access.offset.coefficient(v), stride)
        if w is None:
            raise Decline(f"the {role} index of {access.tensor} is not a multiple of its stride {stride}")
        weights[v] = w
    extent = comp.var(unit).extent if lanes else None
    return Role(role, weights, unit, extent)


def operand(roles: Roles, access: Access, kinds: tuple[str, ...]) -> Operand:
    strides = {}
    for kind in kinds:
        role = roles.roles.get(kind)
        if role is None:
            continue
        stride = access.offset.coefficient(role.unit)
        for v, w in role.weights.items():
            if access.offset.coefficient(v) != stride * w:
                raise Decline(f"{access.tensor} is addressed along {kind} other than its element index")
        if kind == BATCH and stride.is_zero:
            continue  # an operand every batch shares
        strides[kind] = stride
    return Operand(access, strides, access.offset.const)


# -- bounds --------------------------------------------------------------------------------------------------
def bound(view: LoopView, role: Role) -> Poly | None:
    """The bound a comparison of the kernel sets on the role's element index (`offs_m < M` -> M)."""
    target = {v: w for v, w in role.weights.items()}
    for c in view.compares:
        if c.loose:
            continue
        if c.op in (ast.Lt, ast.LtE):
            d = c.left.expr + (-c.right.expr)
        elif c.op in (ast.Gt, ast.GtE):
            d = c.right.expr + (-c.left.expr)
        else:
            continue
        if dict(d.coeffs) != target:
            continue
        b = -d.const
        return b + Poly.of(1) if c.op in (ast.LtE, ast.GtE) else b
    return None


# -- rebinding the user's index names -------------------------------------------------------------------------
@dataclass
class Tiles:
    """The new kernel's names for each role: the element vectors and, where kept, the tile indices."""

    vectors: dict[str, str]  # role -> 1-D element index (`rows`)
    tile_ids: dict[str, str]  # role -> the program's tile index (`tile_m`)
    lanes: dict[str, str]  # role -> 1-D tl.arange of the block
    blocks: dict[str, str]  # role -> the constexpr block size name
    batch: str | None  # the batch program id


def place(role: str, dims: tuple, view_roles: Roles, layout2d: bool) -> str:
    """The subscript that puts a 1-D vector of `role` on its axis in a value of `dims`."""
    if layout2d:
        return "[:, None]" if role == M else "[None, :]"
    axes = [i for i, d in enumerate(dims) if d is not None and view_roles.of_var.get(d) == role]
    if len(dims) == 1:
        return ""
    return "[:, None]" if axes[0] == 0 else "[None, :]"


def rebind(value: Index, roles: Roles, tiles: Tiles, user_blocks: dict[str, str]) -> str | None:
    """Text of the user's index value in the new tiles' names, or None when a variable has no counterpart."""
    expr = value.expr
    by_role: dict[str, dict[str, Poly]] = {}
    for v, c in expr.coeffs:
        role = roles.of_var.get(v)
        if role is None or role == K:
            return None
        by_role.setdefault(role, {})[v] = c
    dims = value.dims
    vector_roles = []
    terms: list[tuple[str, str]] = []  # (coefficient text, name text)
    for role, coeffs in by_role.items():
        if role == BATCH:
            for c in coeffs.values():
                terms.append((poly_text(c), tiles.batch))
            continue
        r = roles.roles[role]
        alpha = coeffs.get(r.unit)
        if alpha is not None and all(coeffs.get(v, Poly()) == alpha * w for v, w in r.weights.items()) and \
                set(coeffs) <= set(r.weights):
            terms.append((poly_text(alpha), f"@{role}"))  # alpha * element index
            vector_roles.append(role)
            continue
        # not proportional to the element index: map variable by variable where the block size is the user's
        if user_blocks.get(role) != tiles.blocks[role]:
            return None
        for v, c in coeffs.items():
            var_kind = "lane" if v == r.unit and r.lane_extent is not None else "tile"
            if var_kind == "lane":
                terms.append((poly_text(c), f"@lane:{role}"))
                vector_roles.append(role)
            elif r.weights.get(v) == Poly.of(tiles.blocks[role]):
                terms.append((poly_text(c), tiles.tile_ids[role]))
            else:
                return None
    host = [role for role in vector_roles
            if any(d is not None and roles.of_var.get(d) == role for d in dims)]
    layout2d = len(dims) > 2 or len(host) != len(vector_roles) or (not dims and vector_roles)
    if len(dims) > 2:
        return None
    parts = []
    for coeff, name in terms:
        if name.startswith("@lane:"):
            role = name.split(":")[1]
            name = tiles.lanes[role] + place(role, dims, roles, layout2d)
        elif name.startswith("@"):
            role = name[1:]
            name = tiles.vectors[role] + place(role, dims, roles, layout2d)
        parts.append(name if coeff == "1" else f"({coeff}) * {name}")
    if not expr.const.is_zero:
        parts.insert(0, poly_text(expr.const))
    return " + ".join(parts) or "0"


def mask_for(access: Access, roles: Roles, tiles: Tiles, bounds: dict[str, str]) -> str | None:
    """The bounds mask of the new tiles for an access of the epilogue, in the access's layout."""
    present = []
    for v in access.offset.variables if access.offset else ():
        role = roles.of_var.get(v)
        if role in (M, N) and role not in present:
            present.append(role)
    if not present:
        return None
    dims = access.dims
    host = [r for r in present if any(d is not None and roles.of_var.get(d) == r for d in dims)]
    layout2d = len(host) != len(present) or len(dims) > 2 or not dims
    return " & ".join(f"({tiles.vectors[r]}{place(r, dims, roles, layout2d)} < {bounds[r]})" for r in sorted(present))


# -- text of the new kernel ----------------------------------------------------------------------------------
def shifted(source: str, start: int, end: int, edits: list[Edit]) -> str:
    """source[start:end] with the edits that fall inside it applied."""
    inside = [Edit(e.start - start, e.end - start, e.text) for e in edits if start <= e.start and e.end <= end]
    return apply_edits(source[start:end], inside)


def body_span(ks: KernelSource) -> tuple[int, int, list[ast.stmt]]:
    """(first offset, end offset, statements) of the kernel's body after its docstring."""
    body = list(ks.fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
            body[0].value.value, str):
        body = body[1:]
    if not body:
        raise Decline("the kernel has no body")
    return ks.text.line_start(body[0].lineno), ks.text.line_end(ks.fn.end_lineno), body


def is_kind(comp: Computation, var: str, kind: str) -> bool:
    v = comp.var(var)
    return v is not None and v.kind == kind


# -- bounds from the launch and the loop (kernels without masks) -------------------------------------------
def grid_fallback(ks: KernelSource, role: Role, view: LoopView) -> Poly | None:
    """An unmasked scalar kernel: the program axis of the role covers exactly a size passed to the kernel."""
    (var,) = role.weights if len(role.weights) == 1 else (None,)
    v = view.comp.var(var) if var else None
    if v is None or v.kind != PROGRAM or not var.startswith("pid") or not var[3:].isdigit():
        return None
    axis = int(var[3:])
    found = set()
    positional = [p.name for p in ks.info.params if p.kind == "positional"]
    for site in ks.launches():
        call = ks.node_at(site)
        grid = grid_elts(ks, call)
        if grid is None or axis >= len(grid[0]):
            return None
        text = ast.unparse(grid[0][axis])
        bound = {**dict(zip(positional, call.args, strict=False)), **{k.arg: k.value for k in call.keywords}}
        match = [p for p, a in bound.items() if ast.unparse(a) == text and not ks.info.param(p).is_constexpr]
        if len(match) != 1:
            return None
        found.add(match[0])
    return Poly.of(found.pop()) if len(found) == 1 else None


def grid_elts(ks: KernelSource, call: ast.Call) -> tuple[list[ast.AST], str | None] | None:
    """The launch grid's axes (following a grid variable or a lambda) and the lambda's argument name."""
    grid = grid_node(ks, call)
    arg = None
    if isinstance(grid, ast.Lambda):
        arg = grid.args.args[0].arg if grid.args.args else None
        grid = grid.body
    if isinstance(grid, (ast.Tuple, ast.List)):
        return list(grid.elts), arg
    return [grid], arg


def loop_stop_bound(view: LoopView, role: Role, loop: ast.For, ks: KernelSource) -> Poly | None:
    """A loop `range(0, n, step)` over the role's index with n a (non-constexpr) parameter: n bounds the role."""
    loops = [v for v in role.weights if view.comp.var(v) and view.comp.var(v).kind == LOOP]
    if len(loops) != 1:
        return None
    var = view.comp.var(loops[0])
    args = loop.iter.args if isinstance(loop.iter, ast.Call) else []
    start_zero = len(args) < 2 or is_zero(args[0])
    stop = args[1] if len(args) >= 2 else (args[0] if args else None)
    if not start_zero or role.weights[loops[0]] != var.step or not isinstance(stop, ast.Name):
        return None
    param = ks.info.param(stop.id)
    return Poly.of(stop.id) if param is not None and not param.is_constexpr else None
