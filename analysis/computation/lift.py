"""Lift one `@triton.jit` kernel's AST into a `Computation` (see model.py): an abstract interpretation of its body.

Each expression gets an abstract value (values.py): an affine `Index` over program ids, loop iterations and
`tl.arange` lanes; a `BlockPtr` or `Descriptor`; loaded `Data` with its lineage. Helpers of the same file are
inlined at their calls. A loop body is lifted twice: once to learn which variables it carries and how pointers
advance (`ptrs += BLOCK_K * stride_k` makes the offset grow by that much per iteration), then for real with those
inductions in place. What cannot be modelled is recorded with its line and reason, never guessed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager

from ..kernels import KernelInfo, ModuleInfo
from .model import LANE, LOOP, PROGRAM, Access, Accumulation, Computation, IndexVar, Op
from .symbolic import Affine, Poly
from .values import BlockPtr, Data, Descriptor, Dims, Index, Mask, Opaque, Tuple, Value

TL = "triton.language."
REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"}
SCANS = {"cumsum", "cumprod", "associative_scan"}
ELEMENTWISE = {
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid", "abs", "maximum", "minimum", "erf", "tanh", "sin",
    "cos", "fma", "clamp", "softmax", "floor", "ceil", "div_rn", "fdiv", "sqrt_rn", "log1p", "umulhi",
}
PASS_THROUGH = {"multiple_of", "max_contiguous", "max_constancy", "cast", "broadcast_to", "reshape", "view",
                "expand_dims", "permute", "trans", "ravel", "assume"}
ATOMICS = {"atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas", "atomic_and", "atomic_or",
           "atomic_xor"}
BUILTINS = {"min", "max", "int", "float", "abs", "len", "bool", "print", "isinstance", "getattr"}
IGNORED = {"static_assert", "device_assert", "static_print", "device_print", "debug_barrier", "inline_asm_elementwise"}
MAX_INLINE_DEPTH = 4


class Lifter:
    def __init__(self, module: ModuleInfo, kernel: KernelInfo) -> None:
        self.module = module
        self.comp = Computation(kernel=kernel.name)
        self.kernel = kernel
        self.pointer_order = [p.name for p in kernel.params if not p.is_constexpr]
        self.loops: list[str] = []
        self.running: list[set[str]] = []  # variables carried by each open loop (a running accumulator)
        self.recording = True
        self.depth = 0
        self._pending: list[Access] = []

    # -- entry ---------------------------------------------------------------------------------------------
    def run(self) -> Computation:
        env: dict[str, Value] = {p.name: Index.of_poly(Poly.of(p.name)) for p in self.kernel.params}
        self.body(self.kernel.node.body, env)
        return self.comp

    # -- bookkeeping -------------------------------------------------------------------------------------
    def note(self, node: ast.AST, why: str) -> None:
        if self.recording:
            entry = f"line {getattr(node, 'lineno', '?')}: {why}"
            if entry not in self.comp.unmodelled:
                self.comp.unmodelled.append(entry)

    def add_var(self, var: IndexVar) -> None:
        if self.recording and self.comp.var(var.name) is None:
            self.comp.index_vars.append(var)

    def add_op(self, op: Op) -> None:
        if self.recording:
            self.comp.ops.append(op)

    def add_access(self, access: Access) -> None:
        if self.recording:
            self.comp.accesses.append(access)

    @contextmanager
    def silent(self) -> Iterator[None]:
        before = self.recording
        self.recording = False
        try:
            yield
        finally:
            self.recording = before

    def canon(self, node: ast.AST) -> str | None:
        name = self.module.resolve(node)
        if name and name.startswith(TL):
            return name[len(TL):]
        if name and name.startswith("triton."):
            return name[len("triton."):]
        return name

    # -- statements --------------------------------------------------------------------------------------
    def body(self, stmts: list[ast.stmt], env: dict[str, Value]) -> Value | None:
        for stmt in stmts:
            result = self.stmt(stmt, env)
            if isinstance(stmt, ast.Return):
                return result
        return None

    def stmt(self, s: ast.stmt, env: dict[str, Value]) -> Value | None:
        if isinstance(s, ast.Assign):
            value = self.expr(s.value, env)
            for target in s.targets:
                self.bind(target, value, env)
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            self.bind(s.target, self.expr(s.value, env), env)
        elif isinstance(s, ast.AugAssign):
            old = self.expr(s.target, env)
            self.bind(s.target, self.binop(s.op, old, self.expr(s.value, env), s), env)
        elif isinstance(s, ast.Expr):
            self.expr(s.value, env)
        elif isinstance(s, ast.For):
            self.for_loop(s, env)
        elif isinstance(s, ast.While):
            self.note(s, "while loop: its trip count is not modelled")
            self.loop_body(s, f"while@{s.lineno}", s.body, env, Poly.of(1))
        elif isinstance(s, ast.If):
            self.expr(s.test, env)
            then_env, else_env = dict(env), dict(env)
            r1 = self.body(s.body, then_env)
            r2 = self.body(s.orelse, else_env)
            # Both branches' accesses are recorded; for values the taken branch is unknown: keep the first.
            for name in set(then_env) | set(else_env):
                env[name] = then_env.get(name, else_env.get(name))  # type: ignore[assignment]
            return r1 if r1 is not None else r2
        elif isinstance(s, ast.Return):
            return self.expr(s.value, env) if s.value is not None else None
        elif isinstance(s, (ast.Pass, ast.Break, ast.Continue, ast.Assert)):
            pass
        else:
            self.note(s, f"{type(s).__name__} statement not modelled")
        return None

    def bind(self, target: ast.expr, value: Value, env: dict[str, Value]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.items if isinstance(value, Tuple) else ()
            for i, t in enumerate(target.elts):
                self.bind(t, items[i] if i < len(items) else Opaque("tuple element"), env)

    # -- loops -------------------------------------------------------------------------------------------
    def for_loop(self, s: ast.For, env: dict[str, Value]) -> None:
        it = s.iter
        fn = None
        if isinstance(it, ast.Call):
            fn = self.canon(it.func) or (it.func.id if isinstance(it.func, ast.Name) else None)
        if not (isinstance(it, ast.Call) and it.args and fn in ("range", "static_range")):
            self.note(s, "loop over something other than range(): not modelled")
            self.loop_body(s, f"loop@{s.lineno}", s.body, env, Poly.of(1))
            return
        args = [self.expr(a, env) for a in it.args]
        start = args[0] if len(args) >= 2 else Index.of_poly(Poly())
        step = args[2] if len(args) == 3 else Index.of_poly(Poly.of(1))
        extent = self.module.text_of(it.args[1] if len(it.args) >= 2 else it.args[0])
        name = f"{s.target.id}@{s.lineno}" if isinstance(s.target, ast.Name) else f"loop@{s.lineno}"
        step_poly = step.expr.const if isinstance(step, Index) and step.expr and step.expr.is_constant else Poly.of(1)
        self.add_var(IndexVar(name, LOOP, extent, s.lineno, label=getattr(s.target, "id", ""), step=step_poly))
        if isinstance(s.target, ast.Name):
            if isinstance(start, Index) and start.expr is not None:
                env[s.target.id] = Index(start.expr + Affine.var(name).scale(step_poly), start.dims)
            else:
                env[s.target.id] = Index(None, why="loop start not affine")
        self.loop_body(s, name, s.body, env, step_poly)

    def loop_body(self, s: ast.stmt, name: str, stmts: list[ast.stmt], env: dict[str, Value], step: Poly) -> None:
        # in source order (not a set's): the model's accumulations, and the code emitted from them, stay the same
        # from one run to the next
        assigned = dict.fromkeys(n.id for st in stmts for n in ast.walk(st)
                                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
        carried = [v for v in assigned if v in env]
        entry = dict(env)
        for v in carried:  # tag carried data so accumulations and running stores can be recognised
            val = entry[v]
            if isinstance(val, Data):
                entry[v] = Data(val.sources, val.ops, val.dims, val.products, val.carried | {v}, ())
        with self.silent():
            probe = dict(entry)
            self.loops.append(name)
            self.running.append(set(carried))
            self.body(stmts, probe)
            self.running.pop()
            self.loops.pop()
        # Inductions: an index or pointer that grows by a loop-invariant amount per iteration.
        for v in carried:
            before, after = entry[v], probe.get(v)
            if isinstance(before, Index) and isinstance(after, Index) and before.expr and after.expr:
                delta = after.expr + (-before.expr)
                if delta.is_constant and not delta.const.is_zero:
                    entry[v] = Index(before.expr + Affine.var(name).scale(delta.const), before.dims)
            elif isinstance(before, BlockPtr) and isinstance(after, BlockPtr):
                deltas = tuple(a + (-b) for a, b in zip(after.offsets, before.offsets, strict=False))
                if all(d.is_constant for d in deltas):
                    entry[v] = BlockPtr(before.tensor, before.strides,
                                        tuple(b + Affine.var(name).scale(d.const)
                                              for b, d in zip(before.offsets, deltas, strict=False)), before.lanes)
        self.loops.append(name)
        self.running.append(set(carried))
        self.body(stmts, entry)
        self.running.pop()
        self.loops.pop()
        for v in carried:
            val = entry.get(v)
            if isinstance(val, Data) and v in val.carried:
                self.accumulation(s, name, v, val, stmts)
                # After the loop the value is the accumulator's result; later ops are its epilogue.
                entry[v] = Data(val.sources, val.ops, val.dims, val.products, frozenset({v}), ())
        env.update(entry)

    def accumulation(self, s: ast.stmt, loop: str, var: str, val: Data, stmts: list[ast.stmt]) -> None:
        last = val.ops[-1] if val.ops else ""
        op = {"dot": "dot", "+": "sum", "-": "sum", "maximum": "max", "max": "max", "minimum": "min", "min": "min",
              "*": "product", "fma": "sum"}.get(last, "other")  # fma(a, h, b) ends in an add, as a * h + b does
        if op == "other" and "dot" in val.ops:
            op = "dot"
        elif op == "other" and last == "where":
            op = "select"  # replaced under a condition each step: an argmax's best value and index
        stored = any(
            isinstance(n, ast.Call) and self.canon(n.func) == "store"
            and any(isinstance(x, ast.Name) and x.id == var for a in n.args[1:2] for x in ast.walk(a))
            for st in stmts for n in ast.walk(st)
        )
        if self.recording:
            self.comp.accumulations.append(
                Accumulation(var, loop, op, getattr(s, "lineno", 0), tuple(sorted(val.products)), stored)
            )

    # -- expressions -------------------------------------------------------------------------------------
    def expr(self, e: ast.expr | None, env: dict[str, Value]) -> Value:
        if e is None:
            return Opaque("none")
        if isinstance(e, ast.Constant):
            if isinstance(e.value, bool) or not isinstance(e.value, (int, float)):
                return Opaque("constant")
            if isinstance(e.value, int):
                return Index.of_poly(Poly.of(e.value))
            return Data(ops=("const",))
        if isinstance(e, ast.Name):
            if e.id in env:
                return env[e.id]
            return self.module_constant(e)
        if isinstance(e, ast.Attribute):
            if e.attr in ("T",):
                v = self.expr(e.value, env)
                return self.transpose(v)
            base = self.expr(e.value, env) if not self.canon(e) else None
            if isinstance(base, Opaque) or base is None:
                return Opaque(f"attribute {e.attr}")
            return base if e.attr in ("dtype",) else Opaque(f"attribute {e.attr}")
        if isinstance(e, ast.BinOp):
            return self.binop(e.op, self.expr(e.left, env), self.expr(e.right, env), e)
        if isinstance(e, ast.UnaryOp):
            v = self.expr(e.operand, env)
            if isinstance(v, Index) and isinstance(e.op, ast.USub):
                return Index(-v.expr if v.expr else None, v.dims, v.why, v.data)
            if isinstance(v, Data):
                return v.then("neg")
            return v
        if isinstance(e, ast.Compare):
            vals = [self.expr(e.left, env)] + [self.expr(c, env) for c in e.comparators]
            return Mask(data=any(isinstance(v, Data) or (isinstance(v, Index) and v.data) for v in vals))
        if isinstance(e, ast.BoolOp):
            for v in e.values:
                self.expr(v, env)
            return Mask()
        if isinstance(e, ast.Subscript):
            return self.subscript(e, env)
        if isinstance(e, ast.Call):
            return self.call(e, env)
        if isinstance(e, (ast.Tuple, ast.List)):
            return Tuple(tuple(self.expr(x, env) for x in e.elts))
        if isinstance(e, ast.IfExp):
            self.expr(e.test, env)
            return self.expr(e.body, env)
        return Opaque(type(e).__name__)

    def module_constant(self, e: ast.Name) -> Value:
        tree = self.module.tree
        for st in tree.body if tree is not None else ():
            if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == e.id for t in st.targets):
                if isinstance(st.value, ast.Constant) and isinstance(st.value.value, int):
                    return Index.of_poly(Poly.of(e.id))
                if isinstance(st.value, ast.Call):  # NAME = tl.constexpr(4)
                    return Index.of_poly(Poly.of(e.id))
        return Opaque(f"name {e.id}")

    def transpose(self, v: Value) -> Value:
        if isinstance(v, (Data, Index)) and len(v.dims) == 2:
            dims = (v.dims[1], v.dims[0])
            return Data(**{**v.__dict__, "dims": dims}) if isinstance(v, Data) else Index(v.expr, dims, v.why, v.data)
        return v

    def subscript(self, e: ast.Subscript, env: dict[str, Value]) -> Value:
        v = self.expr(e.value, env)
        sl = e.slice
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if all(isinstance(i, ast.Slice) or (isinstance(i, ast.Constant) and i.value is None) for i in items):
            if isinstance(v, (Index, Data)):
                old = list(v.dims)
                dims: list[str | None] = []
                for i in items:
                    if isinstance(i, ast.Constant):
                        dims.append(None)
                    else:
                        dims.append(old.pop(0) if old else None)
                dims += old
                if isinstance(v, Index):
                    return Index(v.expr, tuple(dims), v.why, v.data)
                return Data(**{**v.__dict__, "dims": tuple(dims)})
            return v
        if isinstance(v, Tuple) and isinstance(sl, ast.Constant) and isinstance(sl.value, int):
            return v.items[sl.value] if -len(v.items) <= sl.value < len(v.items) else Opaque("index")
        return Opaque("subscript")

    def binop(self, op: ast.operator, a: Value, b: Value, node: ast.AST) -> Value:
        sym = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
               ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|",
               ast.BitXor: "^"}.get(type(op), "?")
        if isinstance(a, Index) and isinstance(b, Index):
            return self.index_op(sym, a, b, node)
        if sym in ("+", "-") and (isinstance(a, Index) and isinstance(b, Data) or isinstance(a, Data) and isinstance(b, Index)):
            idx = a if isinstance(a, Index) else b
            if idx.expr is not None and self.has_pointer(idx.expr):
                # pointer + (loaded index * stride): a gather/scatter. The affine part keeps the base tensor.
                other = b if idx is a else a
                return Index(idx.expr, _broadcast(idx.dims, other.dims), "address from loaded values", True)
        if isinstance(a, BlockPtr) or isinstance(b, BlockPtr):
            return Opaque("arithmetic on a block pointer")
        da, db = isinstance(a, Data), isinstance(b, Data)
        if da or db:
            sources = (a.sources if da else frozenset()) | (b.sources if db else frozenset())
            carried = (a.carried if da else frozenset()) | (b.carried if db else frozenset())
            products = (a.products if da else frozenset()) | (b.products if db else frozenset())
            # a running accumulator times data is a scaling, not a product of loads; a value derived from an
            # accumulator a finished loop produced (a row max used by the next pass) is data like any other
            running = set().union(*self.running) if self.running else set()
            if (sym == "*" and da and db and a.sources and b.sources and not (a.sources & b.sources)
                    and not ((a.carried | b.carried) & running)):
                products = products | a.sources | b.sources
            base = a if da else b
            dims = _broadcast(a.dims if da else (), b.dims if db else ())
            other = b if da else a
            result = Data(sources, base.ops, dims, products, carried, base.after_loop)
            out = result.then(sym)
            if isinstance(other, Data) and other.carried and not base.carried:
                out = Data(out.sources, out.ops, out.dims, out.products, out.carried, other.after_loop + (sym,))
            return out
        return Opaque(f"operator {sym}")

    def index_op(self, sym: str, a: Index, b: Index, node: ast.AST) -> Index:
        dims = _broadcast(a.dims, b.dims)
        data = a.data or b.data
        if a.expr is None or b.expr is None:
            return Index(None, dims, a.why or b.why, data)
        if sym == "+":
            return Index(a.expr + b.expr, dims, data=data)
        if sym == "-":
            return Index(a.expr + (-b.expr), dims, data=data)
        if sym == "*":
            if b.expr.is_constant:
                return Index(a.expr.scale(b.expr.const), dims, data=data)
            if a.expr.is_constant:
                return Index(b.expr.scale(a.expr.const), dims, data=data)
            return Index(None, dims, f"line {getattr(node, 'lineno', '?')}: product of two index variables", data)
        if sym in ("//", "%", ">>", "&") and b.expr.is_constant and len(a.expr.coeffs) == 1 and a.expr.const.is_zero:
            # floor division / modulo of one index variable makes a new index variable (grouped program order,
            # im2col coordinates): the model stays affine in the derived variable.
            (var, coeff), = a.expr.coeffs
            # named `pid0%(G)`: model.derived_parts reads the parts back
            derived = f"({coeff}*{var}){sym}({b.expr.const})" if coeff.constant != 1 else f"{var}{sym}({b.expr.const})"
            parent = self.comp.var(var)
            kind = parent.kind if parent else PROGRAM
            self.add_var(IndexVar(derived, kind, f"{var} {sym} {b.expr.const}", getattr(node, "lineno", 0)))
            return Index(Affine.var(derived), dims, data=data)
        if a.expr.is_constant and b.expr.is_constant:
            return Index(Affine.constant(Poly.of(f"({a.expr.const}){sym}({b.expr.const})")), dims, data=data)
        return Index(None, dims, f"line {getattr(node, 'lineno', '?')}: '{sym}' of index expressions", data)

    # -- calls -------------------------------------------------------------------------------------------
    def call(self, e: ast.Call, env: dict[str, Value]) -> Value:
        fn = self.canon(e.func)
        kw = {k.arg: k.value for k in e.keywords if k.arg}
        helper = self.helper(e.func)
        if helper is not None:
            return self.inline(helper, e, env)
        if isinstance(e.func, ast.Attribute) and fn is None:
            return self.method(e, env, kw)
        if fn is None:
            fn = e.func.id if isinstance(e.func, ast.Name) else self.module.text_of(e.func)
        short = fn.rsplit(".", 1)[-1]
        if fn in ("program_id",):
            axis = _int(e.args[0] if e.args else kw.get("axis"))
            name = f"pid{axis if axis is not None else '?'}"
            self.add_var(IndexVar(name, PROGRAM, f"grid axis {axis}", e.lineno))
            return Index(Affine.var(name))
        if fn == "num_programs":
            return Index.of_poly(Poly.of(f"num_programs{_int(e.args[0]) if e.args else 0}"))
        if fn == "arange":
            name = f"lane@{e.lineno}:{e.col_offset}"
            start = self.expr(e.args[0], env) if e.args else Index.of_poly(Poly())
            extent = self.module.text_of(e.args[1]) if len(e.args) > 1 else "?"
            self.add_var(IndexVar(name, LANE, extent, e.lineno))
            base = start.expr if isinstance(start, Index) and start.expr is not None else Affine()
            return Index(base + Affine.var(name), (name,))
        if short in PASS_THROUGH and e.args:
            return self.expr(e.args[0], env)
        if fn in ("load",):
            return self.load(e, env, kw)
        if fn in ("store",):
            return self.store(e, env, kw, "store")
        if short in ATOMICS:
            return self.store(e, env, kw, "atomic")
        if fn == "make_block_ptr":
            return self.block_ptr(e, env, kw)
        if fn == "advance":
            return self.advance(e, env)
        if fn in ("make_tensor_descriptor", "tools.tensor_descriptor.TensorDescriptor"):
            return self.descriptor(e, env, kw)
        if fn in ("zeros", "full", "zeros_like", "full_like"):
            return Data(ops=(fn,), dims=self.shape_dims(e.args[0] if e.args else kw.get("shape"), env))
        if fn == "dot":
            a, b = (self.expr(x, env) for x in e.args[:2])
            acc = self.expr(e.args[2], env) if len(e.args) > 2 else self.expr(kw.get("acc"), env)
            self.add_op(Op("dot", "dot", e.lineno))
            return self.dot(a, b, acc)
        if fn in ("where",):
            vals = [self.expr(x, env) for x in e.args]
            data = [v for v in vals[1:] if isinstance(v, Data)]
            if data:
                merged = _merge(data)
                return merged.then("where")
            idx = [v for v in vals[1:] if isinstance(v, Index)]
            return Index(None, idx[0].dims if idx else (), "tl.where over indices") if idx else Opaque("where")
        if short in REDUCTIONS:
            return self.reduce(short, e, env, kw)
        if short in SCANS:
            v = self.expr(e.args[0], env)
            axis = _int(e.args[1] if len(e.args) > 1 else kw.get("axis"))
            self.add_op(Op("scan", short, e.lineno, _axis_var(v, axis)))
            return v.then(short) if isinstance(v, Data) else Data(ops=(short,))
        if short in ELEMENTWISE or fn.startswith("extra.") or fn.startswith("math."):
            vals = [self.expr(x, env) for x in e.args]
            data = [v for v in vals if isinstance(v, Data)]
            if data:
                self.add_op(Op("elementwise", short, e.lineno))
                return _merge(data).then(short)
            idx = [v for v in vals if isinstance(v, Index)]
            return Index(None, idx[0].dims if idx else (), f"{short} of an index") if idx else Opaque(short)
        if short in IGNORED:
            return Opaque(short)
        if fn in ("cdiv",):
            return Index.of_poly(Poly.of(f"cdiv({self.module.text_of(e.args[0])},{self.module.text_of(e.args[1])})"))
        if fn == "float" and len(e.args) == 1 and isinstance(e.args[0], ast.Constant):
            # float("inf"), float("-inf"), float(0): a floating constant, like 1e30 (an accumulator may start there)
            return Data(ops=("const",))
        if fn in BUILTINS:  # Python builtins over constexprs: values, not memory
            return Index(None, why=f"{fn}() of launch values")
        self.note(e, f"call to {fn} not modelled")
        for a in e.args:
            self.expr(a, env)
        return Opaque(f"call {fn}")

    def method(self, e: ast.Call, env: dict[str, Value], kw: dict[str, ast.expr]) -> Value:
        assert isinstance(e.func, ast.Attribute)
        obj = self.expr(e.func.value, env)
        name = e.func.attr
        if name == "to" or name in PASS_THROUGH:
            return obj
        if isinstance(obj, Descriptor) and name in ("load", "store"):
            return self.descriptor_access(e, obj, env, name)
        if name in REDUCTIONS and isinstance(obj, Data):
            axis = _int(e.args[0] if e.args else kw.get("axis"))
            self.add_op(Op("reduce", name, e.lineno, _axis_var(obj, axis)))
            return Data(**{**obj.then(name).__dict__, "dims": _drop(obj.dims, axis)})
        if isinstance(obj, Data):
            return obj.then(name)
        return Opaque(f"method {name}")

    def helper(self, func: ast.expr) -> KernelInfo | None:
        if not isinstance(func, ast.Name):
            return None
        return next((h for h in (*self.module.helpers, *self.module.kernels) if h.name == func.id), None)

    def inline(self, helper: KernelInfo, e: ast.Call, env: dict[str, Value]) -> Value:
        if self.depth >= MAX_INLINE_DEPTH:
            self.note(e, f"helper {helper.name} nested too deep to inline")
            return Opaque("helper")
        inner: dict[str, Value] = {}
        params = [p for p in helper.params]
        for p, a in zip(params, e.args, strict=False):
            inner[p.name] = self.expr(a, env)
        for k in e.keywords:
            if k.arg:
                inner[k.arg] = self.expr(k.value, env)
        for p in params:
            if p.name not in inner:
                inner[p.name] = Index.of_poly(Poly.of(p.default)) if isinstance(p.default, int) else Opaque("default")
        if self.recording and helper.name not in self.comp.helpers_inlined:
            self.comp.helpers_inlined.append(helper.name)
        self.depth += 1
        try:
            result = self.body(helper.node.body, inner)
        finally:
            self.depth -= 1
        return result if result is not None else Opaque("helper returned nothing")

    def has_pointer(self, expr: Affine) -> bool:
        return any(len(m) == 1 and c == 1 and m[0] in self.pointer_order for m, c in expr.const.terms)

    # -- memory ------------------------------------------------------------------------------------------
    def split_pointer(self, v: Value) -> tuple[str, Affine | None, Dims, bool, str]:
        if isinstance(v, BlockPtr):
            return v.tensor, v.offset(), tuple(v.lanes), False, ""
        if not isinstance(v, Index):
            return "?", None, (), False, "pointer not modelled"
        if v.expr is None:
            return "?", None, v.dims, v.data, v.why or "address not affine"
        const = v.expr.const.as_dict()
        candidates = [m[0] for m, c in const.items() if len(m) == 1 and c == 1 and m[0] in self.pointer_order]
        if not candidates:
            return "?", None, v.dims, v.data, "no pointer parameter in the address"
        base = min(candidates, key=lambda n: (0 if "ptr" in n.lower() else 1, self.pointer_order.index(n)))
        rest = dict(const)
        rest.pop((base,))
        return base, Affine.build(v.expr.as_dict(), Poly.from_dict(rest)), v.dims, v.data, ""

    def load(self, e: ast.Call, env: dict[str, Value], kw: dict[str, ast.expr]) -> Value:
        ptr = self.expr(e.args[0] if e.args else kw.get("pointer"), env)
        mask = e.args[1] if len(e.args) > 1 else kw.get("mask")
        if mask is not None:
            self.expr(mask, env)
        tensor, offset, dims, data, why = self.split_pointer(ptr)
        if tensor == "?" and isinstance(ptr, Index) and ptr.expr is None:
            tensor = self.tensor_in(e.args[0] if e.args else None, env)
        self.add_access(Access("load", tensor, e.lineno, offset, mask is not None or isinstance(ptr, BlockPtr),
                               data, tuple(self.loops), why, dims))
        return Data(frozenset({tensor}), ("load",), dims)

    def store(self, e: ast.Call, env: dict[str, Value], kw: dict[str, ast.expr], kind: str) -> Value:
        ptr = self.expr(e.args[0] if e.args else kw.get("pointer"), env)
        value = self.expr(e.args[1] if len(e.args) > 1 else kw.get("value") or kw.get("val"), env)
        mask = e.args[2] if len(e.args) > 2 else kw.get("mask")
        if mask is not None:
            self.expr(mask, env)
        tensor, offset, dims, data, why = self.split_pointer(ptr)
        if tensor == "?" and isinstance(ptr, Index) and ptr.expr is None:
            tensor = self.tensor_in(e.args[0] if e.args else None, env)
        self.add_access(Access(kind, tensor, e.lineno, offset, mask is not None, data, tuple(self.loops), why, dims))
        if isinstance(value, Data) and value.after_loop and self.recording:
            self.comp.epilogue = list(value.after_loop)
        return Opaque(kind)

    def tensor_in(self, node: ast.expr | None, env: dict[str, Value]) -> str:
        """The pointer parameter named in a non-affine address (a gather's base)."""
        names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)] if node is not None else []
        # follow one level of local names back to their definitions' pointer parameters
        for name in names:
            if name in self.pointer_order and "stride" not in name:
                return name
            v = env.get(name)
            if isinstance(v, Index) and v.expr is not None:
                cands = [m[0] for m, c in v.expr.const.terms if len(m) == 1 and c == 1 and m[0] in self.pointer_order]
                if cands:
                    return cands[0]
        return "?"

    def block_ptr(self, e: ast.Call, env: dict[str, Value], kw: dict[str, ast.expr]) -> Value:
        names = ("base", "shape", "strides", "offsets", "block_shape", "order")
        args = dict(zip(names, e.args, strict=False)) | {k: v for k, v in kw.items() if k in names}
        base = self.expr(args.get("base"), env)
        tensor, _, _, _, _ = self.split_pointer(base)
        strides = self.expr(args.get("strides"), env)
        offsets = self.expr(args.get("offsets"), env)
        block = args.get("block_shape")
        n = len(block.elts) if isinstance(block, (ast.Tuple, ast.List)) else 0
        if not (isinstance(strides, Tuple) and isinstance(offsets, Tuple) and n):
            self.note(e, "block pointer with shapes not written as tuples")
            return Opaque("block pointer")
        lanes = []
        for i in range(n):
            name = f"lane@{e.lineno}:{e.col_offset}.{i}"
            self.add_var(IndexVar(name, LANE, self.module.text_of(block.elts[i]), e.lineno))
            lanes.append(name)
        return BlockPtr(tensor, tuple(_poly(s) for s in strides.items), tuple(_affine(o) for o in offsets.items),
                        tuple(lanes))

    def advance(self, e: ast.Call, env: dict[str, Value]) -> Value:
        ptr = self.expr(e.args[0], env)
        delta = self.expr(e.args[1], env) if len(e.args) > 1 else Tuple()
        if not isinstance(ptr, BlockPtr) or not isinstance(delta, Tuple):
            return Opaque("advance")
        offsets = tuple(o + _affine(d) for o, d in zip(ptr.offsets, delta.items, strict=False))
        return BlockPtr(ptr.tensor, ptr.strides, offsets, ptr.lanes)

    def descriptor(self, e: ast.Call, env: dict[str, Value], kw: dict[str, ast.expr]) -> Value:
        names = ("base", "shape", "strides", "block_shape")
        args = dict(zip(names, e.args, strict=False)) | {k: v for k, v in kw.items() if k in names}
        tensor, _, _, _, _ = self.split_pointer(self.expr(args.get("base"), env))
        strides = self.expr(args.get("strides"), env)
        block = args.get("block_shape")
        if not isinstance(strides, Tuple) or not isinstance(block, (ast.Tuple, ast.List)):
            self.note(e, "tensor descriptor with shapes not written as tuples")
            return Opaque("descriptor")
        return Descriptor(tensor, tuple(_poly(s) for s in strides.items),
                          tuple(self.module.text_of(b) for b in block.elts))

    def descriptor_access(self, e: ast.Call, d: Descriptor, env: dict[str, Value], name: str) -> Value:
        offsets = self.expr(e.args[0], env) if e.args else Tuple()
        items = offsets.items if isinstance(offsets, Tuple) else ()
        lanes = []
        for i, size in enumerate(d.block):
            lane = f"lane@{e.lineno}:{e.col_offset}.{i}"
            self.add_var(IndexVar(lane, LANE, size, e.lineno))
            lanes.append(lane)
        bp = BlockPtr(d.tensor, d.strides, tuple(_affine(o) for o in items), tuple(lanes))
        kind = "load" if name == "load" else "store"
        self.add_access(Access(kind, d.tensor, e.lineno, bp.offset(), True, False, tuple(self.loops), "",
                               tuple(lanes)))
        if name == "store":
            value = self.expr(e.args[1], env) if len(e.args) > 1 else None
            if isinstance(value, Data) and value.after_loop and self.recording:
                self.comp.epilogue = list(value.after_loop)
            return Opaque("store")
        return Data(frozenset({d.tensor}), ("load",), tuple(lanes))

    def shape_dims(self, node: ast.expr | None, env: dict[str, Value]) -> Dims:
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(None for _ in node.elts)
        return ()

    def dot(self, a: Value, b: Value, acc: Value) -> Value:
        sources = frozenset()
        for v in (a, b):
            if isinstance(v, Data):
                sources |= v.sources
        dims = ((a.dims[0] if isinstance(a, Data) and a.dims else None),
                (b.dims[-1] if isinstance(b, Data) and b.dims else None))
        if isinstance(acc, Data):
            return Data(acc.sources | sources, (acc.ops + ("dot",))[-12:], acc.dims or dims,
                        acc.products | sources, acc.carried, acc.after_loop)
        return Data(sources, ("dot",), dims, sources)

    def reduce(self, name: str, e: ast.Call, env: dict[str, Value], kw: dict[str, ast.expr]) -> Value:
        v = self.expr(e.args[0], env) if e.args else Opaque("reduce")
        axis = _int(e.args[1] if len(e.args) > 1 else kw.get("axis"))
        # `tl.reduce((vals, idxs), axis, combine_fn)` reduces a tuple of same-shaped blocks along one axis
        parts = v.items if isinstance(v, Tuple) and v.items else (v,)
        shaped = next((p for p in parts if isinstance(p, (Data, Index)) and p.dims), parts[0])
        self.add_op(Op("reduce", name, e.lineno, _axis_var(shaped, axis)))
        out = tuple(Data(**{**p.then(name).__dict__, "dims": _drop(p.dims, axis)}) if isinstance(p, Data)
                    else Data(ops=(name,)) for p in parts)
        return Tuple(out) if isinstance(v, Tuple) and v.items else out[0]


def _broadcast(a: Dims, b: Dims) -> Dims:
    if not a:
        return b
    if not b:
        return a
    n = max(len(a), len(b))
    a2 = (None,) * (n - len(a)) + tuple(a)
    b2 = (None,) * (n - len(b)) + tuple(b)
    return tuple(x if x is not None else y for x, y in zip(a2, b2, strict=True))


def _drop(dims: Dims, axis: int | None) -> Dims:
    if axis is None or not dims:
        return ()
    return tuple(d for i, d in enumerate(dims) if i != (axis % len(dims)))


def _axis_var(v: Value, axis: int | None) -> str | None:
    dims = v.dims if isinstance(v, (Data, Index)) else ()
    if not dims:
        return None
    if axis is None:
        return dims[0] if len(dims) == 1 else None
    try:
        return dims[axis]
    except IndexError:
        return None


def _int(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value if isinstance(node.operand.value, int) else None
    return None


def _poly(v: object) -> Poly:
    if isinstance(v, Index) and v.expr is not None and v.expr.is_constant:
        return v.expr.const
    return Poly.of("?")


def _affine(v: object) -> Affine:
    if isinstance(v, Index) and v.expr is not None:
        return v.expr
    return Affine.constant(Poly.of("?"))


def _merge(values: list[Data]) -> Data:
    first = values[0]
    out = first
    for v in values[1:]:
        out = Data(out.sources | v.sources, out.ops, _broadcast(out.dims, v.dims), out.products | v.products,
                   out.carried | v.carried, out.after_loop or v.after_loop)
    return out


def lift_kernel(module: ModuleInfo, kernel: KernelInfo) -> Computation:
    """The computation of one kernel of a parsed file; never raises on code it does not understand."""
    try:
        return Lifter(module, kernel).run()
    except RecursionError:
        comp = Computation(kernel=kernel.name)
        comp.unmodelled.append("expression nesting too deep to lift")
        return comp
    except Exception as exc:  # a construct the lifter mishandles: say so, never take the caller down
        comp = Computation(kernel=kernel.name)
        comp.unmodelled.append(f"lifter error: {type(exc).__name__}: {exc}")
        return comp
