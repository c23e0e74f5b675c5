"""Schedule: attention-shaped kernels -> the online-softmax (flash) form over key blocks, with causal block skipping.

Works on the computation model: a kernel the model classifies as attention (a running max, exp, a sum and a
product accumulation over key blocks; or a two/three-pass softmax followed by P@V) gets its roles from the lifted
accesses of Q (loaded once), K and V (loaded in the P@V loop) and the output O: query rows M (Q and O only), keys N
(K and V only), the head dim D (a lane of all four) and batch/head program ids (all four; or Q/O only and K/V
only, with a step of their own, as grouped-query attention's heads). Strides, bounds (the draft's comparisons, or the
launch grid / loop stop; a head dim padded to a power of two keeps its mask on every tile), the causal mask (a
comparison between key and query index; a mask built with `|` or a negation is declined) and the softmax scale (the
scalar factors applied to Q K^T before exp) come from the model, never from names. Static branches that only recast
a tile (`if FLAG: k = k.to(tl.float32)`, drafts' interpreter upcasts) follow the tile the flash form loads; a
modification of the scores alone (a soft cap) is re-emitted on each block's scores before the masks.
The body is re-emitted: BLOCK_M query rows per program, Q loaded once, K^T/V tiles addressed from each key block's start,
`tl.dot` for QK^T and PV, exp2 with scale * log2(e) folded into one multiply, the accumulator rescaled by the
running max; key blocks wholly inside the bounds (below the diagonal when causal) run unmasked and only the
boundary/diagonal blocks apply the draft's masks; a causal draft stops at the diagonal. The draft's statements after
the loop (normalisation, cast, store) are kept, their index names rebound to the new tiles and masked at the row
bound. BLOCK_M/BLOCK_N, num_warps and num_stages are launch literals (config search moves them).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ...computation import classify, lift_kernel
from ...computation.classify import ATTENTION
from ...computation.lift import Lifter
from ...computation.model import LANE, LOOP, PROGRAM, Computation
from ...computation.symbolic import Poly
from ...computation.values import Data, Index
from ..kernel_patterns import uncast
from ..model import ANY_KERNEL
from ..recipe_edits import and_mask, append_argument, imported_as
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit
from . import dot_emit as de
from .emit import append_constexprs, assigned_in, free_names
from .static_casts import cast_branches, recast
from .targets import attention_tiles

M, N, D, BATCH = "M", "N", "D", "batch"
LOG2E = "1.4426950408889634"
# tl calls a softmax-then-P@V loop may make (anything else is work the schedule would drop)
LOOP_CALLS = {"load", "dot", "trans", "max", "maximum", "exp", "exp2", "sum", "where", "zeros", "full", "arange",
              "minimum", "cast", "permute", "reshape", "broadcast_to", "expand_dims", "fma"}


class _ScaleRecorder(Lifter):
    """The lifter, also keeping the scalar factors multiplied into (or divided out of) Q K^T before its exp."""

    def __init__(self, module, kernel, qk: set[str]) -> None:  # noqa: ANN001 (the lifter's own types)
        super().__init__(module, kernel)
        self.qk = qk
        self.factors: dict[tuple[int, int], tuple[str, ast.expr]] = {}

    def expr(self, e: ast.expr | None, env: dict):  # noqa: ANN201
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Mult, ast.Div)) and self.recording:
            with self.silent():
                left, right = self.expr(e.left, env), self.expr(e.right, env)
            sides = [(left, e.right, right), (right, e.left, left)] if isinstance(e.op, ast.Mult) else \
                [(left, e.right, right)]
            for data, other_node, other in sides:
                if self._scores(data) and not isinstance(other, Data):
                    self.factors[(e.lineno, e.col_offset)] = ("*" if isinstance(e.op, ast.Mult) else "/", other_node)
                    break
        return super().expr(e, env)

    def _scores(self, v: object) -> bool:
        return isinstance(v, Data) and bool(v.sources) and v.sources <= self.qk and not (
            {"exp", "exp2"} & set(v.ops))


def _decline_if(cond: bool, why: str) -> None:
    if cond:
        raise Decline(why)


def _roles(comp: Computation, q, k, v, o) -> tuple[dict[str, str], dict[str, de.Role]]:  # noqa: ANN001
    sets = [set(a.offset.variables) for a in (q, k, v, o)]
    of_var: dict[str, str] = {}
    for var in sorted(set().union(*sets)):
        where = tuple(var in s for s in sets)
        kind = comp.var(var).kind if comp.var(var) else None
        role = {(True, False, False, True): M, (False, True, True, False): N}.get(where)
        if where == (True, True, True, True):
            role = D if kind == LANE else BATCH
        if role is None:
            label = (comp.var(var).label if comp.var(var) else "") or var
            raise Decline(f"index `{label}` addresses {'/'.join(t.tensor for t, w in zip((q, k, v, o), where, strict=True) if w)}"
                          " only: not a query, key, head-dim or batch index of attention")
        of_var[var] = role
    for role, source in ((M, q), (N, k)):  # grouped-query attention: `h` selects Q's head, `h // GROUP` K/V's
        de.own_batches(comp, of_var, role, source)
    roles = {}
    for role, source in ((M, q), (N, k), (D, q)):
        vars_ = [x for x, r in of_var.items() if r == role]
        _decline_if(not vars_, f"no index runs over the {role} axis of attention")
        roles[role] = de.role_of(comp, role, vars_, source)
    _decline_if(roles[D].lane_extent is None or len(roles[D].weights) != 1, "the head dim is not one tl.arange lane")
    return of_var, roles


def _strides(access, roles: dict[str, de.Role], kinds: tuple[str, ...]) -> dict[str, str]:  # noqa: ANN001
    out = {}
    for kind in kinds:
        role = roles[kind]
        stride = access.offset.coefficient(role.unit)
        for var, w in role.weights.items():
            _decline_if(access.offset.coefficient(var) != stride * w,
                        f"{access.tensor} is addressed along {kind} other than its element index")
        out[kind] = de.poly_text(stride)
    return out


def _program_text(comp: Computation, var: str, pids: dict[int, str]) -> str:
    """Source text of a program-id index (`pid1`, or `pid1 // H` as the model names it) in the new pid names."""
    plain = re.fullmatch(r"pid(\d+)", var)
    text = f"pid{plain.group(1)}" if plain else comp.var(var).extent
    for axis in {int(a) for a in re.findall(r"\bpid(\d+)\b", text)}:
        pids.setdefault(axis, "")
    return re.sub(r"\bpid(\d+)\b", lambda m_: pids[int(m_.group(1))] or f"@pid{m_.group(1)}", text)


def _base(comp, access, of_var, pids) -> str:  # noqa: ANN001
    parts = [de.poly_text(access.offset.const)] if not access.offset.const.is_zero else []
    for var, c in access.offset.coeffs:
        if of_var[var] == BATCH:
            _decline_if(comp.var(var).kind != PROGRAM, f"the batch index `{var}` is not a program id")
            parts.append(f"({de.poly_text(c)}) * ({_program_text(comp, var, pids)})")
    return " + ".join(parts) or "0"


def _causal(view: de.LoopView, roles: dict[str, de.Role]) -> tuple[int | None, list]:
    """The diagonal offset c of a causal mask (keys n <= m + c allowed) and the comparisons left unexplained."""
    mw, nw = roles[M].weights, roles[N].weights
    diag: set[int] = set()
    other = []
    for cmp in view.compares:
        if cmp.loose and (set(cmp.left.expr.variables) | set(cmp.right.expr.variables)) & (set(mw) | set(nw)):
            raise Decline(f"a mask combines {cmp.left.expr} vs {cmp.right.expr} with `|`, `^` or a negation "
                          "(not modelled)")
        if cmp.op in (ast.Lt, ast.LtE):
            d, strict = cmp.left.expr + (-cmp.right.expr), cmp.op is ast.Lt
        elif cmp.op in (ast.Gt, ast.GtE):
            d, strict = cmp.right.expr + (-cmp.left.expr), cmp.op is ast.Gt
        else:
            other.append(cmp)
            continue
        coeffs = dict(d.coeffs)
        if not coeffs or coeffs in (mw, nw, roles[D].weights):
            continue  # constant, or a bound of the rows / keys / head dim (read by de.bound)
        plus = {**nw, **{x: -w for x, w in mw.items()}}
        if coeffs == plus and d.const.constant is not None:
            diag.add(-d.const.constant - (1 if strict else 0))
        elif coeffs == {x: -w for x, w in plus.items()}:
            raise Decline("the mask keeps keys after the query (not a causal mask)")
        else:
            other.append(cmp)
    _decline_if(len(diag) > 1, "two different causal diagonals")
    return (diag.pop() if diag else None), other


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    comp = lift_kernel(ks.ctx.module, ks.info)
    kind = classify(comp)
    _decline_if(kind.name != ATTENTION, f"the model classifies the kernel as {kind.name} "
                f"({'; '.join(kind.reasons)}), not attention")
    _decline_if(ks.info.autotune is not None, "the kernel is autotuned: its configs own the block sizes")
    pv = [a for a in comp.accumulations if a.op in ("dot", "sum") and len(a.product_of) == 3]
    exp_ops = {o.name for o in comp.ops if o.name in ("exp", "exp2")}
    _decline_if(len(pv) > 1 and len({a.var for a in pv}) == 1 and exp_ops == {"exp2"} and all(
        any(o.kind == "dot" and o.line > comp.var(a.loop).line for o in comp.ops) for a in pv),
        "already in the target form (tl.dot and exp2 over key loops split at the boundary/diagonal blocks)")
    _decline_if(len(pv) != 1, "no single accumulation of P@V (products of three tensors) over the keys")
    acc = pv[0]
    loop_line = comp.var(acc.loop).line
    _, end, body = de.body_span(ks)
    loops = [s for s in body if isinstance(s, ast.For)]
    _decline_if(not loops or loops[-1].lineno != loop_line,
                f"the P@V loop (line {loop_line}) is not the last loop statement of the kernel's body")
    loop = loops[-1]
    for s in body:
        _decline_if(not isinstance(s, ast.For) and any(isinstance(x, (ast.For, ast.While)) for x in ast.walk(s)),
                    f"line {s.lineno}: a loop inside a compound statement")
    prologue = [s for s in body if not isinstance(s, ast.For) and s.lineno < loop.lineno]
    epilogue = [s for s in body if s.lineno > loop.end_lineno]
    casts = cast_branches(ks, prologue + loop.body)
    allowed = {id(x) for b in casts for x in ast.walk(b.node)}
    mods = _score_mods(ks, loop, {a.var for a in comp.accumulations if a.op == "max"})
    in_mods = {id(x) for st in mods.stmts for x in ast.walk(st)}
    allowed |= in_mods  # elementwise: any tl function may appear in a modification of the scores
    for lp in loops:
        for s in ast.walk(lp):
            if id(s) in allowed:
                continue
            if isinstance(s, (ast.If, ast.While, ast.Break, ast.Continue, ast.Return)) or (
                    isinstance(s, ast.For) and s is not lp):
                raise Decline(f"line {s.lineno}: the key loop has a branch or a nested loop")
            if isinstance(s, ast.Call) and ks.tl_call(s) and ks.tl_call(s) not in LOOP_CALLS:
                raise Decline(f"line {s.lineno}: the key loop also computes tl.{ks.tl_call(s)}")
            if isinstance(s, ast.Call) and isinstance(s.func, ast.Name) and s is not lp.iter and \
                    s.func.id not in ("float", "int", "min", "max"):
                raise Decline(f"line {s.lineno}: the key loop calls {s.func.id}()")
    view = de.LoopView.of(ks, loop_line)
    comp = view.comp
    in_pv = [a for a in comp.loads if acc.loop in a.in_loops]
    q_t = [t for t in acc.product_of if not any(a.tensor == t for a in in_pv)]
    _decline_if(len(q_t) != 1, "the query tensor (loaded once, outside the key loop) is not one of the products")
    qk_acc = [a for a in comp.accumulations if a.op in ("sum", "max") and len(a.product_of) == 2
              and q_t[0] in a.product_of and set(a.product_of) <= set(acc.product_of)]
    _decline_if(not qk_acc, "no running max or sum over the scores")
    k_t = next(t for t in qk_acc[0].product_of if t != q_t[0])
    v_t = next(t for t in acc.product_of if t not in (q_t[0], k_t))
    _decline_if({a.tensor for a in in_pv} != {k_t, v_t}, "the P@V loop loads "
                f"{', '.join(sorted({a.tensor for a in in_pv} - {k_t, v_t}))} besides K and V")
    q_l = [a for a in comp.loads if a.tensor == q_t[0] and not a.in_loops]
    k_l = [a for a in in_pv if a.tensor == k_t]
    v_l = [a for a in in_pv if a.tensor == v_t]
    _decline_if(len(q_l) != 1 or len(k_l) != 1 or len(v_l) != 1, "Q, K or V is loaded more than once")
    stores = comp.stores
    _decline_if(len(stores) != 1 or stores[0].in_loops, f"the kernel writes {len(stores)} outputs; the schedule "
                "writes one output tile after the key loop")
    q, k, v, o = q_l[0], k_l[0], v_l[0], stores[0]
    for a in (q, k, v, o):
        _decline_if(a.offset is None, f"the access of {a.tensor} (line {a.line}) is not affine: {a.why}")
    of_var, roles = _roles(comp, q, k, v, o)
    if view.opaque_compares:
        raise Decline(f"line {view.opaque_compares[0]}: a mask computed from loaded values (not modelled)")
    diag, other = _causal(view, roles)
    d_bound = de.bound(view, roles[D])
    loop_vars = {x.name for x in comp.index_vars if x.kind == LOOP}
    for cmp in other:
        vars_ = set(cmp.left.expr.variables) | set(cmp.right.expr.variables)
        if vars_ & ({x for x in loop_vars if x != acc.loop} | loop_vars_lanes(comp, loops)):
            continue  # a mask of an earlier pass over the keys (the flash form replaces that pass)
        raise Decline(f"a comparison the schedule does not model ({cmp.left.expr} vs {cmp.right.expr})")
    _decline_if(diag is not None and diag not in (0, -1), f"a causal diagonal offset {diag} (only 0 and -1)")
    m_prog = [x for x in roles[M].weights if comp.var(x).kind == PROGRAM]
    _decline_if(len(m_prog) != 1 or not re.fullmatch(r"pid\d+", m_prog[0]) or any(
        comp.var(x).kind == LOOP for x in roles[M].weights), "the query rows are not one program id (and a lane)")
    _decline_if(any(comp.var(x).kind == PROGRAM for x in roles[N].weights), "the keys are split across programs")
    m_bound = de.bound(view, roles[M]) or de.grid_fallback(ks, roles[M], view)
    n_bound = de.bound(view, roles[N]) or de.loop_stop_bound(view, roles[N], loop, ks)
    _decline_if(m_bound is None, "no bound for the query rows: no comparison masks them and no launch size covers them")
    _decline_if(n_bound is None, "no bound for the keys: no comparison masks them and the loop stop is no parameter")
    head = roles[D].lane_extent
    _decline_if(not (ks.info.param(head) and ks.info.param(head).is_constexpr) and not head.isdigit(),
                f"the head dim `{head}` is not a constexpr")
    exps = {ks.tl_call(c) for lp in loops for c in ast.walk(lp) if isinstance(c, ast.Call) and id(c) not in in_mods} \
        & {"exp", "exp2"}
    _decline_if(len(exps) != 1, "the loop mixes exp and exp2")
    dots = sum(1 for x in ast.walk(loop) if isinstance(x, ast.Call) and ks.tl_call(x) == "dot")
    flash = exps == {"exp2"} and len(loops) == 1 and roles[M].lane_extent is not None and dots >= 2
    _decline_if(flash and diag is None, "already in the target form (flash loop with tl.dot and exp2, no causal mask)")
    scale, post_scale = _scale(ks, q_t[0], k_t, loops, mods)
    names = {**_loaded_names(loop, {k.line: "k", v.line: "v"}), **_loaded_names_list(prologue, {q.line: "q"})}
    p_user = _probabilities(ks, loop, names.get("v"))
    for b in casts:
        _decline_if(b.target not in (names.get("q"), names.get("k"), names.get("v"), p_user) or (
            b.target == names.get("q") and b.node not in prologue) or (
            b.target != names.get("q") and b.node in prologue),
            f"line {b.node.lineno}: a branch on {ks.segment(b.node.test)} casts `{b.target}`, which is no loaded "
            "Q/K/V tile or P@V's probabilities")
    dot_kw = {}
    for c in ast.walk(loop):
        if isinstance(c, ast.Call) and ks.is_tl(c, "dot"):
            for kw in c.keywords:
                if kw.arg in ("input_precision", "allow_tf32"):
                    dot_kw[kw.arg] = ks.segment(kw.value)
    saw_dot = any(isinstance(c, ast.Call) and ks.is_tl(c, "dot") for c in ast.walk(loop))
    exact = not saw_dot or dot_kw.get("input_precision", "").strip("'\"") == "ieee" or dot_kw.get("allow_tf32") == "False"
    ctx = dict(comp=comp, view=view, of_var=of_var, roles=roles, q=q, k=k, v=v, o=o, acc=acc, diag=diag,
               m_bound=m_bound, n_bound=n_bound, d_bound=d_bound, casts=casts, p_user=p_user, head=head, scale=scale,
               post_scale=post_scale, mods=mods, exp2=exps == {"exp2"}, names=names,
               exact=exact, prologue=prologue, loop=loop, epilogue=epilogue, end=end, m_prog=m_prog[0])
    return _emit(recipe, ks, ctx)


def _probabilities(ks: KernelSource, loop: ast.For, v_name: str | None) -> str | None:
    """The user's name of the probabilities multiplied into V (`tl.dot(p.to(v.dtype), v)` -> "p")."""
    for c in ast.walk(loop):
        if isinstance(c, ast.Call) and ks.is_tl(c, "dot") and len(c.args) >= 2 and \
                isinstance(c.args[1], ast.Name) and c.args[1].id == v_name:
            node = uncast(c.args[0])
            return node.id if isinstance(node, ast.Name) else None
    return None


def loop_vars_lanes(comp: Computation, loops: list[ast.For]) -> set[str]:
    """Lane variables created inside the earlier key loops (their masks belong to passes the schedule drops)."""
    spans = [(lp.lineno, lp.end_lineno) for lp in loops[:-1]]
    return {x.name for x in comp.index_vars if x.kind == LANE and any(a <= x.line <= b for a, b in spans)}


def _loaded_names(loop: ast.For, lines: dict[int, str]) -> dict[str, str]:
    return _loaded_names_list(loop.body, lines)


def _loaded_names_list(stmts: list[ast.stmt], lines: dict[int, str]) -> dict[str, str]:
    """The user's variable names for the tiles loaded on the given lines (`kt = tl.load(...)` -> {"k": "kt"})."""
    out = {}
    for s in stmts:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            for c in ast.walk(s.value):
                if isinstance(c, ast.Call) and c.lineno in lines and lines[c.lineno] not in out:
                    out[lines[c.lineno]] = s.targets[0].id
    return out


def _scale(ks: KernelSource, q_t: str, k_t: str, loops: list[ast.For], mods: _ScoreMods) -> tuple[str, str]:
    """The softmax scale: the products of the scalar factors applied to Q K^T (or to Q) before exp, split into
    those before the draft's score modification and those after it (all of them "before" when there is none)."""
    rec = _ScaleRecorder(ks.ctx.module, ks.info, {q_t, k_t})
    rec.run()
    earlier = [(lp.lineno, lp.end_lineno) for lp in loops[:-1]]
    pre, post = [], []
    mod_lines = mods.lines
    for (line, _), (op, node) in sorted(rec.factors.items()):
        if any(a <= line <= b for a, b in earlier) or line in mod_lines:
            continue  # the same scale in an earlier pass; a factor inside the modification is re-emitted with it
        _decline_if(any(isinstance(x, ast.Call) and ks.is_tl(x, "load") for x in ast.walk(node)),
                    f"line {line}: the scores are scaled by a loaded value")
        text = ks.segment(node)
        (post if mod_lines and line > max(mod_lines) else pre).append(
            f"({text})" if op == "*" else f"(1.0 / ({text}))")
    return " * ".join(pre) or "1.0", " * ".join(post) or "1.0"


@dataclass
class _ScoreMods:
    """The draft's elementwise modification of the scores between Q K^T and the running max (a soft cap
    `cap * tanh(s / cap)`, written any way), re-emitted on the flash form's scores before its masks."""

    name: str | None = None  # the user's name of the scores
    stmts: list[ast.stmt] = field(default_factory=list)

    @property
    def lines(self) -> set[int]:
        return {ln for st in self.stmts for ln in range(st.lineno, st.end_lineno + 1)}


def _score_mods(ks: KernelSource, loop: ast.For, stops: set[str]) -> _ScoreMods:
    """Walks the key loop from the statement computing Q K^T to the one taking the running max (or reading a
    max of an earlier pass): statements that only scale the scores by a scalar, or mask them with tl.where, are
    modelled (scale, compares); any other statement that reads the scores is a modification, carried verbatim when
    it reads nothing but the scores, its own temporaries, kernel parameters and tl."""
    mods = _ScoreMods()
    names: set[str] = set()
    params = {p.name for p in ks.info.params}
    for st in loop.body:
        calls = {ks.tl_call(c) for c in ast.walk(st) if isinstance(c, ast.Call)}
        reads = set(free_names([st]))
        if calls & {"max", "maximum"} or reads & stops:
            break
        target = st.targets[0].id if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(
            st.targets[0], ast.Name) else st.target.id if isinstance(st, ast.AugAssign) and isinstance(
            st.target, ast.Name) else None
        if mods.name is None:
            if calls & {"dot", "sum"} and target is not None:
                mods.name = target
                names = {target}
            continue
        if not reads & names:
            continue
        kind = type(st).__name__.lower()
        _decline_if(target is None, f"line {st.lineno}: the scores are read inside {'an' if kind[0] in 'aeiou' else 'a'} "
                    f"`{kind}` (a branch or loop the flash form cannot carry)")
        if target == mods.name and _scales_or_masks(ks, st.value, mods.name, names):
            continue
        if mods.name in reads and target != mods.name:
            names.add(target)  # a temporary of the modification
        unknown = reads - names - params - {ks.tl_alias, "float", "triton", "tl"}
        _decline_if(bool(unknown), f"line {st.lineno}: the scores are modified with "
                    f"{', '.join(sorted(unknown))} (the flash form carries modifications of the scores alone)")
        mods.stmts.append(st)
    return mods


def _renamed(st: ast.stmt, old: str | None, new: str) -> ast.stmt:
    """A copy of `st` with the name `old` read or written as `new`."""
    copy = ast.parse(ast.unparse(st)).body[0]
    for x in ast.walk(copy):
        if isinstance(x, ast.Name) and x.id == old:
            x.id = new
    return copy


def _scales_or_masks(ks: KernelSource, value: ast.expr, name: str, names: set[str]) -> bool:
    """`s * c`, `s / c` (c free of the scores) or `tl.where(cond, s, const)`: what the flash form models."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Mult, ast.Div)):
        sides = [(value.left, value.right)] + ([(value.right, value.left)] if isinstance(value.op, ast.Mult) else [])
        return any(isinstance(a, ast.Name) and a.id == name and not set(free_names([ast.Expr(b)])) & names
                   for a, b in sides)
    if ks.is_tl(value, "where") and len(value.args) == 3:
        cond, x, y = value.args
        return not set(free_names([ast.Expr(cond)])) & names and any(
            isinstance(a, ast.Name) and a.id == name for a in (x, y))
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):  # an additive mask: s + where(c, 0, -inf)
        return any(isinstance(a, ast.Name) and a.id == name and ks.is_tl(b, "where") and not set(
            free_names([ast.Expr(b)])) & names for a, b in ((value.left, value.right), (value.right, value.left)))
    return False


def _emit(recipe: SourceRecipe, ks: KernelSource, c: dict) -> list:  # noqa: PLR0915 (one kernel's text)
    comp, roles, of_var = c["comp"], c["roles"], c["of_var"]
    cfg = attention_tiles(ks.ctx.target)
    fresh, tl = ks.fresh, ks.tl
    params = {p.name: p for p in ks.info.params}
    blocks, user_blocks, added = {}, {}, []
    for r, base in ((M, "BLOCK_M"), (N, "BLOCK_N")):
        ext = roles[r].lane_extent
        if ext and ext in params and params[ext].is_constexpr and ext not in blocks.values():
            blocks[r] = user_blocks[r] = ext
        else:
            name = fresh(base)
            while name in added or name in blocks.values():
                name += "_"
            blocks[r] = name
            added.append(name)
    literal = {blocks[M]: cfg.block_m, blocks[N]: cfg.block_n}
    n = {x: fresh(x) for x in ("start_m", "lane_m", "lane_n", "lane_d", "rows", "keys", "start_n", "q_tile_ptrs",
                               "k_base", "v_base", "qk_scale", "n_full", "lo", "hi", "scores",
                               "m_new", "alpha", "p")}
    pids: dict[int, str] = {}
    m_axis = int(c["m_prog"][3:])
    pids[m_axis] = n["start_m"]
    bases = {t: _base(comp, a, of_var, pids) for t, a in (("q", c["q"]), ("k", c["k"]), ("v", c["v"]), ("o", c["o"]))}
    for axis in sorted(pids):
        if not pids[axis]:
            pids[axis] = fresh(f"pid_{axis}")
    bases = {t: re.sub(r"@pid(\d+)", lambda m_: pids[int(m_.group(1))], b) for t, b in bases.items()}
    sq = _strides(c["q"], roles, (M, D))
    sk = _strides(c["k"], roles, (N, D))
    sv = _strides(c["v"], roles, (N, D))
    bm, bn, hd = blocks[M], blocks[N], c["head"]
    mb, nb = de.poly_text(c["m_bound"]), de.poly_text(c["n_bound"])
    m_lane = roles[M].lane_extent is not None
    user = c["names"]
    q_name = user.get("q") or fresh("q")
    k_name = user.get("k") or fresh("k")
    v_name = user.get("v") or fresh("v")
    acc = c["acc"].var
    sums = [a.var for a in comp.accumulations if a.op == "sum" and a.var != acc and len(a.product_of) == 2]
    maxes = [a.var for a in comp.accumulations if a.op == "max"]
    reads_after = set(free_names(c["epilogue"]))
    _decline_if(bool(set(maxes) & reads_after), "the statements after the loop read the running max")
    l_user = next((x for x in sums if x in reads_after), None)
    l_run = l_user if (l_user and m_lane) else fresh("l_i")
    m_run = maxes[0] if (maxes and m_lane and maxes[0] not in (l_run, acc)) else fresh("m_i")
    tile = {M: n["rows"], D: n["lane_d"]}

    def d_ok(place: str) -> str:
        """The head-dim mask the draft applies (`offs_d < D` when the head dim is padded to a power of two)."""
        return "" if c["d_bound"] is None else f"({n['lane_d']}{place} < {de.poly_text(c['d_bound'])})"

    def masked_by(*conds: str) -> str:
        parts = [x for x in conds if x]
        return f", mask={' & '.join(parts)}, other=0.0" if parts else ""

    # the user's statements after the loop, and the prologue names they read, rebound to the new tiles
    bound_first: list[str] = []
    if l_user and not m_lane:
        bound_first.append(f"{l_user} = {l_run}[:, None]")
    if not l_user:  # the draft normalised P inside its loop: the flash accumulator is divided once here
        bound_first.append(f"{acc} = {acc} / {l_run}[:, None]")
    for s in c["epilogue"]:
        for x in ast.walk(s):
            if isinstance(x, ast.Call) and ks.tl_call(x) in ("program_id", "arange"):
                raise Decline(f"line {x.lineno}: the statements after the loop index with tl.{ks.tl_call(x)}")
    needed = [x for x in free_names(c["epilogue"]) if x not in (acc, l_user)]
    rebound, copied, seen = [], [], set()
    loop_assigned = assigned_in(c["loop"])
    while needed:
        name = needed.pop(0)
        if name in seen:
            continue
        seen.add(name)
        _decline_if(name in loop_assigned, f"`{name}` is assigned in the key loop and read after it")
        writers = [s for s in c["prologue"] if name in assigned_in(s)]
        if not writers:
            continue
        value = c["view"].before_loop.get(name)
        if isinstance(value, Index) and value.expr is not None:
            rebound.append(f"{name} = {_rebind(comp, value, of_var, roles, tile, pids)}")
            continue
        for w in writers:
            _decline_if(not isinstance(w, (ast.Assign, ast.AugAssign, ast.AnnAssign)),
                        f"line {w.lineno}: `{name}` is set by a compound statement")
            if w not in copied:
                copied.append(w)
            needed.extend(x for x in free_names([w]) if x not in seen)
    copied.sort(key=lambda s: s.lineno)
    edits: list[Edit] = []
    for s in copied + c["epilogue"]:
        for call in ast.walk(s):
            kind = ks.tl_call(call)
            if kind not in ("load", "store") and not (kind or "").startswith("atomic_"):
                continue
            access = next((x for x in comp.accesses if x.line == call.lineno and
                           (x.kind == "load") == (kind == "load")), None)
            _decline_if(access is None or access.offset is None,
                        f"line {call.lineno}: an access after the loop could not be modelled")
            if any(of_var.get(x) == M for x in access.offset.variables):
                place = _place(access.dims, of_var, M, [M] + ([D] if any(of_var.get(x) == D for x in
                                                                           access.offset.variables) else []))
                edits.append(and_mask(ks, call, f"({n['rows']}{place} < {mb})"))

    indent = ks.text.indent(c["loop"])
    inner = ks.text.indent(c["loop"].body[0])
    prec = ""
    if c["exact"]:
        prec = ', input_precision="ieee"'
    q_mask = masked_by(f"({n['rows']}[:, None] < {mb})", d_ok("[None, :]"))
    mods: _ScoreMods = c["mods"]
    to_log2 = "" if c["exp2"] else f" * {LOG2E}"
    # with a modification the scores stay in the draft's units through it; log2(e) is folded after it
    scale_text = c["scale"] if mods.stmts else f"{c['scale']}{to_log2}"
    post_text = ""
    if mods.stmts:
        post_text = LOG2E if c["post_scale"] == "1.0" and to_log2 else f"{c['post_scale']}{to_log2}"
    mod_lines = [ast.unparse(_renamed(st, mods.name, n["scores"])) for st in mods.stmts]
    if post_text and post_text != "1.0":
        mod_lines.append(f"{n['scores']} = {n['scores']} * {post_text}")
    lines = [
        "# tritonlens schedule: online-softmax (flash) attention over key blocks: exp2 with the scale folded into "
        "one multiply,",
        "# masks only on the boundary" + (" and diagonal blocks, key blocks past the diagonal skipped" if
                                          c["diag"] is not None else " block"),
        *[f"{pids[a]} = {tl('program_id')}({a})" for a in sorted(pids)],
        f"{n['lane_m']} = {tl('arange')}(0, {bm})",
        f"{n['lane_n']} = {tl('arange')}(0, {bn})",
        f"{n['lane_d']} = {tl('arange')}(0, {hd})",
        f"{n['rows']} = {n['start_m']} * {bm} + {n['lane_m']}",
        f"{n['q_tile_ptrs']} = {c['q'].tensor} + {bases['q']} + {n['rows']}[:, None] * ({sq[M]}) + "
        f"{n['lane_d']}[None, :] * ({sq[D]})",
        f"{n['k_base']} = {c['k'].tensor} + {bases['k']}",
        f"{n['v_base']} = {c['v'].tensor} + {bases['v']}",
        f"{q_name} = {tl('load')}({n['q_tile_ptrs']}{q_mask})",
        *recast(c["casts"], user.get("q"), q_name),
        f"{n['qk_scale']} = {scale_text}",
        f"{m_run} = {tl('full')}(({bm},), float(\"-inf\"), dtype={tl('float32')})",
        f"{l_run} = {tl('zeros')}(({bm},), dtype={tl('float32')})",
        f"{acc} = {tl('zeros')}(({bm}, {hd}), dtype={tl('float32')})",
        f"{n['n_full']} = ({nb}) // {bn} * {bn}",
    ]
    if c["diag"] is not None:
        lines += [f"{n['lo']} = {tl('minimum')}(({n['start_m']} * {bm} + {c['diag'] + 1}) // {bn} * {bn}, "
                  f"{n['n_full']})",
                  f"{n['hi']} = {tl('minimum')}(({n['start_m']} + 1) * {bm} + {c['diag']}, {nb})"]
    else:
        lines += [f"{n['lo']} = {n['n_full']}", f"{n['hi']} = {nb}"]

    def block(masked: bool) -> list[str]:
        keys_in = masked  # only the boundary and diagonal blocks reach past the key bound
        kmask = masked_by(f"({n['keys']}[None, :] < {nb})" if keys_in else "", d_ok("[:, None]"))
        vmask = masked_by(f"({n['keys']}[:, None] < {nb})" if keys_in else "", d_ok("[None, :]"))
        # addresses from the key block's start, not pointer tiles carried across the loop: a carried
        # BLOCK_N x HEAD_D pointer tile costs two registers per element (measured at 64 x 64 x 128, 4 warps:
        # 3,456 B spill stores with carried tiles, none without)
        k_addr = f"{n['k_base']} + {n['lane_d']}[:, None] * ({sk[D]}) + {n['keys']}[None, :] * ({sk[N]})"
        v_addr = f"{n['v_base']} + {n['keys']}[:, None] * ({sv[N]}) + {n['lane_d']}[None, :] * ({sv[D]})"
        out = [f"{n['keys']} = {n['start_n']} + {n['lane_n']}"]
        out += [f"{k_name} = {tl('load')}({k_addr}{kmask})", *recast(c["casts"], user.get("k"), k_name),
                f"{n['scores']} = {tl('dot')}({q_name}, {k_name}{prec}) * {n['qk_scale']}", *mod_lines]
        if masked:
            keep = f"({n['keys']}[None, :] < {nb})"
            if c["diag"] is not None:
                keep += f" & ({n['keys']}[None, :] <= {n['rows']}[:, None] + {c['diag']})"
            out.append(f"{n['scores']} = {tl('where')}({keep}, {n['scores']}, float(\"-inf\"))")
        out += [f"{n['m_new']} = {tl('maximum')}({m_run}, {tl('max')}({n['scores']}, 1))",
                f"{n['alpha']} = {tl('exp2')}({m_run} - {n['m_new']})",
                f"{n['p']} = {tl('exp2')}({n['scores']} - {n['m_new']}[:, None])",
                f"{l_run} = {l_run} * {n['alpha']} + {tl('sum')}({n['p']}, 1)",
                f"{v_name} = {tl('load')}({v_addr}{vmask})", *recast(c["casts"], user.get("v"), v_name),
                *recast(c["casts"], c["p_user"], n["p"]),
                f"{acc} = {acc} * {n['alpha']}[:, None]",
                f"{acc} = {tl('dot')}({n['p']}.to({v_name}.dtype), {v_name}, {acc}{prec})",
                f"{m_run} = {n['m_new']}"]
        return out

    where = "below the diagonal and " if c["diag"] is not None else ""
    text = "".join(f"{indent}{x}\n" for x in lines)
    text += f"{indent}# key blocks {where}inside the key bound: no mask\n"
    text += f"{indent}for {n['start_n']} in range(0, {n['lo']}, {bn}):\n" + "".join(f"{inner}{x}\n" for x in block(False))
    text += f"{indent}# the boundary block" + (" and the diagonal block(s)" if c["diag"] is not None else "") + \
        ": the draft's masks\n"
    text += f"{indent}for {n['start_n']} in range({n['lo']}, {n['hi']}, {bn}):\n" + \
        "".join(f"{inner}{x}\n" for x in block(True))
    text += "".join(f"{indent}{x}\n" for x in bound_first + rebound)
    for s in copied:
        a, b = ks.text.statement_lines(s)
        text += de.shifted(ks.text.source, a, b, edits)
    if c["epilogue"]:
        a = ks.text.line_end(c["loop"].end_lineno)
        text += de.shifted(ks.text.source, a, c["end"], edits)
    start = ks.text.line_start(c["prologue"][0].lineno if c["prologue"] else c["loop"].lineno)
    start = min(start, ks.text.line_start(de.body_span(ks)[2][0].lineno))
    body_edit = Edit(start, c["end"], text)
    launch = _launch_edits(ks, blocks, user_blocks, added, literal, cfg, c["m_bound"], m_axis)
    sig_edits = [append_constexprs(ks, added)] if added else []
    rationale = (
        f"The model reads this kernel as attention: Q ({c['q'].tensor}) against K ({c['k'].tensor}) and V "
        f"({c['v'].tensor}) over key blocks, written to {c['o'].tensor}"
        + (", causally masked" if c["diag"] is not None else "") +
        f". The body is re-emitted in the online-softmax (flash) form: {literal[bm]} query rows per program with Q "
        f"loaded once, {literal[bn]}-key K^T/V tiles addressed from each key block's start, `tl.dot` for QK^T and PV into "
        "fp32, exp2 with the softmax scale and log2(e) folded into one multiply, the accumulator rescaled by the "
        "running max; only the boundary block" + (" and the diagonal block(s) apply masks, and key blocks past the "
                                                  "diagonal are skipped" if c["diag"] is not None else " applies masks")
        + ". The statements after the loop are the draft's own, rebound to the new tiles."
        + (f" The draft's modification of the scores (line {mods.stmts[0].lineno}"
           + (f"-{mods.stmts[-1].end_lineno}" if mods.stmts[-1].end_lineno != mods.stmts[0].lineno else "")
           + ") is applied to every block's scores, in the draft's units, before the masks; log2(e) is folded after it."
           if mods.stmts else "")
    )
    return [finish(recipe, ks.ctx, [body_edit, *sig_edits, *launch], "online-softmax (flash) attention"
                   + (" with causal block skipping" if c["diag"] is not None else ""), rationale,
                   config=dict(literal))]


def _place(dims: tuple, of_var: dict[str, str], role: str, roles_present: list[str]) -> str:
    """The subscript that puts the 1-D `role` vector on its axis in a value of `dims` ([M, D] order otherwise)."""
    axes = [i for i, d in enumerate(dims) if d is not None and of_var.get(d) == role]
    hosted = all(any(d is not None and of_var.get(d) == r for d in dims) for r in roles_present)
    if hosted and len(dims) <= 2 and axes:
        return "" if len(dims) == 1 else ("[:, None]" if axes[0] == 0 else "[None, :]")
    return "[:, None]" if role == M else "[None, :]"


def _rebind(comp: Computation, value: Index, of_var, roles, tile, pids) -> str:  # noqa: ANN001
    """Text of the user's index value in the new tiles' names; Decline when a variable has no counterpart."""
    by_role: dict[str, dict[str, Poly]] = {}
    parts = []
    for var, coeff in value.expr.coeffs:
        role = of_var.get(var)
        if role is None and comp.var(var) and comp.var(var).kind == PROGRAM:
            role = BATCH  # a program id the epilogue uses that addresses no operand (kept as it was)
        _decline_if(role in (None, N), f"an index read after the loop runs over `{var}`, which has no counterpart")
        if role == BATCH:
            text = re.sub(r"@pid(\d+)", lambda m_: pids.get(int(m_.group(1)), "?"), _program_text(comp, var, pids))
            _decline_if("?" in text or "@" in text, f"program axis of `{var}` is not kept")
            parts.append(f"({de.poly_text(coeff)}) * ({text})")
            continue
        by_role.setdefault(role, {})[var] = coeff
    present = [r for r in (M, D) if r in by_role]
    for role in present:
        r = roles[role]
        coeffs = by_role[role]
        alpha = coeffs.get(r.unit)
        _decline_if(alpha is None or set(coeffs) != set(r.weights) or any(
            coeffs[x] != alpha * w for x, w in r.weights.items()),
            f"an index read after the loop is not proportional to the {role} element index")
        name = tile[role] + _place(value.dims, of_var, role, present)
        parts.append(name if alpha == Poly.of(1) else f"({de.poly_text(alpha)}) * {name}")
    if not value.expr.const.is_zero:
        parts.insert(0, de.poly_text(value.expr.const))
    return " + ".join(parts) or "0"


def _launch_edits(ks, blocks, user_blocks, added, literal, cfg, m_bound, m_axis) -> list[Edit]:  # noqa: ANN001, PLR0913
    triton = imported_as(ks, "triton")
    sites = ks.launches()
    _decline_if(not sites, "no launch of the kernel in this file")
    positional = [p.name for p in ks.info.params if p.kind == "positional"]
    edits: list[Edit] = []
    for site in sites:
        call = ks.node_at(site)
        _decline_if(any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords),
                    "a launch passes *args or **kwargs")
        grid = de.grid_elts(ks, call)
        _decline_if(grid is None or m_axis >= len(grid[0]), "the launch grid has no axis for the query rows")
        meta = grid[1] or "META"
        key = lambda p, meta=meta: f'{meta}["{p}"]'  # noqa: E731 (a launch argument by name)
        axes = [ks.segment(x) for x in grid[0]]
        axes[m_axis] = f'{triton}.cdiv({de.poly_text(m_bound, key)}, {meta}["{blocks[M]}"])'
        edits.append(ks.text.replace(call.func.slice, f"lambda {meta}: ({', '.join(axes)}{',' if len(axes) == 1 else ''})"))
        bound_args = {**dict(zip(positional, call.args, strict=False)), **{k.arg: k.value for k in call.keywords}}
        for name in user_blocks.values():
            node = bound_args.get(name)
            _decline_if(node is None, f"a launch does not pass {name}")
            edits.append(ks.text.replace(node, str(literal[name])))
        appended = [f"{name}={literal[name]}" for name in added]
        for opt, value in (("num_warps", cfg.num_warps), ("num_stages", cfg.num_stages)):
            if value is None:
                continue
            kw = next((k for k in call.keywords if k.arg == opt), None)
            if kw is not None:
                edits.append(ks.text.replace(kw.value, str(value)))
            else:
                appended.append(f"{opt}={value}")
        if appended:
            edits.append(append_argument(ks, call, ", ".join(appended)))
    return edits


RECIPE = SourceRecipe(
    name="schedule-attention-flash",
    title="Re-emit attention as online-softmax (flash) key blocks, exp2, causal block skipping",
    keys=(ANY_KERNEL,),
    build=_build,
    summary="attention-shaped loops (max, exp, sum, dot; or multi-pass softmax then P@V) -> flash form over key "
    "blocks with tl.dot, exp2 with the scale folded, causal blocks past the diagonal skipped",
)
