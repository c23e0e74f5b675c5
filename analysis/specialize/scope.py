"""Where a launch runs: every `kernel[grid](...)` (and `kernel.warmup(...)`) call of a module, indexed once
(`CallIndex`), with the names bound before it in its function and at module level (`Scope`), and the calls of
the launching function's callers, up to MAX_CALL_LEVELS levels (KernelBench's `forward` fed by `get_inputs()`
included)."""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from typing import Any

from ..source.node_memo import per_node
from ..source.node_walk import child_nodes, walk_nodes
from .asserts import equalities
from .autograd import HOME_SCOPE, SET_WHERE, apply_calls, ctx_attributes, ctx_name, function_class, method
from .kernelbench import init_attributes, init_callers, kernelbench_callers

MAX_CALLERS = 4
MAX_CALL_LEVELS = 3  # launching function <- wrapper <- wrapper <- ModelNew.forward(*get_inputs())
FuncNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class Launch:
    kernel: str
    line: int
    call: ast.Call
    scope: Scope
    grid: ast.expr | None = None


@dataclass
class Scope:
    """Names bound before a launch: the launching function's assignments and params, then module level."""

    bindings: dict[str, ast.expr] = field(default_factory=dict)
    params: dict[str, ast.arg] = field(default_factory=dict)
    outer: Scope | None = None
    # calls of the launching function in this module, each with the scope it runs in (whose own callers it holds)
    callers: list[tuple[ast.Call, Scope]] = field(default_factory=list)
    param_order: list[str] = field(default_factory=list)
    defaults: dict[str, ast.expr] = field(default_factory=dict)  # the launching function's param defaults

    def unpacked_rank(self, name: str) -> int | None:
        """Rank of tensor `name` when the code unpacks its shape (`M, K = name.shape`)."""
        for value in self.bindings.values():
            n = getattr(value, "unpack_len", None)
            if n is not None and isinstance(value, ast.Subscript):
                owner = value.value
                if (
                    isinstance(owner, ast.Attribute)
                    and owner.attr == "shape"
                    and isinstance(owner.value, ast.Name)
                ):
                    if owner.value.id == name:
                        return int(n)
        return self.outer.unpacked_rank(name) if self.outer else None

    def lookup(self, name: str, prior: bool = False) -> tuple[str, Any] | None:
        """prior: the name as it was before this scope rebound it (`x = x.contiguous()` reads the parameter)."""
        if name in self.bindings and not prior:
            return "expr", self.bindings[name]
        if name in self.params:
            return "param", self.params[name]
        return self.outer.lookup(name) if self.outer else None


def _collect_bindings(body: list[ast.stmt], before_line: int, out: dict[str, ast.expr]) -> None:
    """Assignments that run before `before_line`, last one wins; descends into if/with/for/try blocks."""
    for stmt in body:
        if stmt.lineno >= before_line:
            break
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                _bind_target(target, stmt.value, out)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
            out[stmt.target.id] = stmt.value
        elif isinstance(stmt, ast.Assert):  # `assert n == 4`: past it, n is 4 (a launch may rely on it)
            for name, literal in equalities(stmt.test):
                stated = copy.copy(literal)
                stated.asserted_at = stmt.lineno  # type: ignore[attr-defined]
                out[name] = stated
        elif isinstance(stmt, ast.If):
            _collect_branches(stmt, before_line, out)
        elif isinstance(stmt, (ast.With, ast.For, ast.While, ast.Try)):
            for block in ("body", "orelse", "finalbody"):
                _collect_bindings(getattr(stmt, block, []) or [], before_line, out)


def _collect_branches(stmt: ast.If, before_line: int, out: dict[str, ast.expr]) -> None:
    """`if c: x = a else: x = b` binds x to `a if c else b` (`branch_fallback`: the branch taken when `c` cannot
    be read, the one whose binding comes last), so every name bound under one `if` resolves on the same branch
    (`has_bias = False; bias_arg = dummy` vs `has_bias = True; bias_arg = bias`). A launch inside a branch sees
    that branch only."""
    body, orelse = dict(out), dict(out)
    _collect_bindings(stmt.body, before_line, body)
    _collect_bindings(stmt.orelse, before_line, orelse)
    for block, bound in ((stmt.body, body), (stmt.orelse, orelse)):
        if block and block[0].lineno <= before_line <= (block[-1].end_lineno or block[-1].lineno):
            out.update(bound)  # the launch runs inside this branch
            return
    test = stmt.test
    for name in body.keys() | orelse.keys():  # `if mode == "a": mode = "b"`: the test reads the earlier `mode`
        if body.get(name) is not out.get(name) or orelse.get(name) is not out.get(name):
            if any(isinstance(n, ast.Name) and n.id == name for n in walk_nodes(test)):
                test = _Prior(name, out.get(name)).visit(copy.deepcopy(test))
    for name in body.keys() | orelse.keys():
        earlier = out.get(name)
        a, b = body.get(name, earlier), orelse.get(name, earlier)
        if a is b:
            continue
        if a is None or b is None:  # bound in one branch only, never before: that binding (as before)
            out[name] = a if b is None else b  # type: ignore[assignment]
            continue
        merged = ast.IfExp(test=test, body=a, orelse=b)
        merged.lineno = stmt.lineno
        merged.branch_fallback = b if b is not earlier else a  # type: ignore[attr-defined]
        out[name] = merged


class _Prior(ast.NodeTransformer):
    """`x = f(x)`: the `x` read on the right is the earlier binding (substituted), or the one outside this scope
    (a Name marked `prior`), never the new binding itself (which would resolve to itself forever)."""

    def __init__(self, name: str, earlier: ast.expr | None) -> None:
        self.name, self.earlier = name, earlier

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id != self.name:
            return node
        if self.earlier is not None:
            return self.earlier
        node.prior = True  # type: ignore[attr-defined]
        return node


def _bind_target(target: ast.expr, value: ast.expr, out: dict[str, ast.expr]) -> None:
    if isinstance(target, ast.Name):
        if any(isinstance(n, ast.Name) and n.id == target.id for n in walk_nodes(value)):
            value = _Prior(target.id, out.get(target.id)).visit(copy.deepcopy(value))
        out[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            for t, v in zip(target.elts, value.elts, strict=True):
                _bind_target(t, v, out)
        else:
            # `M, K = a.shape`: each name is one element of `value`
            for i, t in enumerate(target.elts):
                item = ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load())
                item.lineno = getattr(value, "lineno", 0)
                item.unpack_len = len(target.elts)  # type: ignore[attr-defined]  # `M, K = a.shape`: a is 2-D
                _bind_target(t, item, out)
    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        # `ctx.tile = 256`, `self.n = n`: read back as `ctx.tile` by a later line (or by backward: autograd.py)
        out[f"{target.value.id}.{target.attr}"] = value


def module_scope(tree: ast.Module) -> Scope:
    scope = Scope()
    _collect_bindings(tree.body, 10**9, scope.bindings)
    return scope


@dataclass
class CallIndex:
    """Every call of the module with its enclosing function, built in one pass and shared by all kernels."""

    tree: ast.Module
    top: Scope
    launches: dict[str, list[tuple[ast.Call, FuncNode | None]]]  # kernel name -> `kernel[grid](...)` calls
    calls: dict[str, list[tuple[ast.Call, FuncNode | None]]]  # function name -> plain `f(...)` calls


def index_calls(tree: ast.Module) -> CallIndex:
    """One pass over the module, merged from per-statement indexes (node_memo): after a keystroke only the
    edited top-level statement is walked again."""
    launches: dict[str, list[tuple[ast.Call, FuncNode | None]]] = {}
    calls: dict[str, list[tuple[ast.Call, FuncNode | None]]] = {}
    for stmt in reversed(tree.body):  # the order a whole-tree stack walk visits them
        part_launches, part_calls = per_node("specialization_scope.calls", stmt, _index_statement)
        for name, found in part_launches.items():
            launches.setdefault(name, []).extend(found)
        for name, found in part_calls.items():
            calls.setdefault(name, []).extend(found)
    return CallIndex(tree, module_scope(tree), launches, calls)


def _index_statement(stmt: ast.AST) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """The launches and plain calls inside one top-level statement, each with its enclosing function."""
    launches: dict[str, list[tuple[ast.Call, FuncNode | None]]] = {}
    calls: dict[str, list[tuple[ast.Call, FuncNode | None]]] = {}
    holder = ast.Module(body=[stmt], type_ignores=[])  # `stmt` seen as the module's child, as in a whole walk
    stack: list[tuple[ast.AST, FuncNode | None]] = [(holder, None)]
    while stack:
        node, func = stack.pop()
        for child in child_nodes(node):  # singletons left out: leaves that are neither calls nor defs
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((child, child))
                continue
            if isinstance(child, ast.Call):
                name = _launched_name(child)
                if name is not None:
                    launches.setdefault(name, []).append((child, func))
                elif isinstance(child.func, ast.Name):
                    calls.setdefault(child.func.id, []).append((child, func))
                elif isinstance(child.func, ast.Attribute) and isinstance(child.func.value, ast.Name):
                    if child.func.attr == "apply":  # `Op.apply(...)`: a call of an autograd Function's forward
                        calls.setdefault(f"{child.func.value.id}.apply", []).append((child, func))
            stack.append((child, func))
    return launches, calls


def find_launches(tree: ast.Module | CallIndex, kernel: str) -> list[Launch]:
    """Every `kernel[grid](...)` call in the module, with the scope it runs in."""
    index = tree if isinstance(tree, CallIndex) else index_calls(tree)
    out: list[Launch] = []
    for call, func in index.launches.get(kernel, []):
        scope = _scope_at(call, func, index.top, index.tree)
        _add_callers(scope, func, index, MAX_CALL_LEVELS)
        if isinstance(call.func, ast.Subscript):
            grid: ast.expr | None = call.func.slice
        else:  # kernel.warmup(..., grid=...): same arguments as a launch
            grid = next((kw.value for kw in call.keywords if kw.arg == "grid"), None)
        out.append(Launch(kernel, call.lineno, call, scope, grid=grid))
    return sorted(out, key=lambda launch: launch.line)


def _add_callers(scope: Scope, func: FuncNode | None, index: CallIndex, levels: int, seen: tuple = ()) -> None:
    """The calls of `func` in this module, each with its own callers, `levels` deep: a launch in a helper that a
    wrapper calls from `ModelNew.forward` sees the tensors `get_inputs()` makes (a recursive call is not followed)."""
    if func is None:
        return
    init_scopes: dict[int, Scope] = {}
    for key, (value, init) in init_attributes(index.tree, func).items():  # `self.weight` set in __init__
        scope.bindings.setdefault(key, _read_in_init(key, value, init, init_scopes, index))
    plain = index.calls.get(func.name, [])
    cls = function_class(index.tree, func)
    if cls is not None:
        _add_autograd(scope, func, cls, index, levels, seen)
        if func.name == "forward":  # nothing calls forward by name: `Op.apply(a, b)` does, ctx left out
            plain = [*apply_calls(cls, func, index.calls, index.top.bindings), *plain]
    for caller_call, caller in plain[:MAX_CALLERS] if levels > 0 else []:
        caller_scope = _scope_at(caller_call, caller, index.top, index.tree)
        if caller is not None and caller not in seen and caller is not func:
            _add_callers(caller_scope, caller, index, levels - 1, (*seen, func))
        scope.callers.append((caller_call, caller_scope))
    if not scope.callers:  # KernelBench (the last level too): the harness calls ModelNew.forward(*get_inputs())
        scope.callers.extend(
            kernelbench_callers(index.tree, func, lambda c, f: _scope_at(c, f, index.top, index.tree))
        )


def _read_in_init(key: str, value: ast.expr, init: FuncNode, scopes: dict[int, Scope], index: CallIndex) -> ast.expr:
    """A copy of `value` marked to be read in its `__init__`'s scope (`nn.Conv2d(c_in, c_out, 3)` with `c_in` a
    constructor argument, which get_init_inputs() gives in a KernelBench file and nothing gives elsewhere), not in
    the launching function's, where the same names may mean something else."""
    if id(init) not in scopes:
        home = _scope_in(init, (init.end_lineno or init.lineno) + 1, index.top)
        home.callers.extend(init_callers(index.tree, init, lambda c, f: _scope_at(c, f, index.top, index.tree)))
        scopes[id(init)] = home
    marked = copy.copy(value)  # a shallow copy: the mark stays off the tree other scopes read
    setattr(marked, HOME_SCOPE, scopes[id(init)])
    setattr(marked, SET_WHERE, f"{key} set in __init__ at line {getattr(value, 'lineno', '?')}")
    return marked


def _add_autograd(
    scope: Scope, func: FuncNode, cls: ast.ClassDef, index: CallIndex, levels: int, seen: tuple
) -> None:
    """A method of an autograd Function other than forward (backward) reads what forward kept on ctx:
    `ctx.<name>` is bound to forward's value, read in forward's own scope (whose callers are the `.apply` calls);
    what the method itself binds to `ctx.<name>` before the launch wins."""
    forward = method(cls, "forward")
    reader = ctx_name(func)
    if forward is None or func is forward or forward in seen or reader is None:
        return
    owner = ctx_name(forward) if method(cls, "setup_context") is None else None
    if owner is None:
        return
    home = _scope_in(forward, (forward.end_lineno or forward.lineno) + 1, index.top)
    _add_callers(home, forward, index, levels, (*seen, func))
    where = f"{cls.name}.forward"
    for key, value in ctx_attributes(home.bindings, owner, reader, home, where).items():
        scope.bindings.setdefault(key, value)


def _launched_name(call: ast.Call) -> str | None:
    """The kernel of `kernel[grid](...)`, or of `kernel.warmup(...)` (a compile with launch arguments)."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "warmup" and isinstance(func.value, ast.Name):
        return func.value.id
    if not isinstance(func, ast.Subscript):
        return None
    target = func.value
    name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
    return name if isinstance(name, str) else None


def _scope_at(call: ast.Call, func: FuncNode | None, top: Scope, tree: ast.Module) -> Scope:
    """Names bound where `call` runs: its function's params and earlier assignments, then module level."""
    if func is None:
        # Module level (e.g. under `if __name__ == "__main__":`): only what ran before the call counts.
        scope = Scope()
        _collect_bindings(tree.body, call.lineno, scope.bindings)
        return scope
    return _scope_in(func, call.lineno, top)


def _scope_in(func: FuncNode, before_line: int, top: Scope) -> Scope:
    """Names bound in `func` before `before_line`: its params and assignments, then module level."""
    args = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
    positional = [*func.args.posonlyargs, *func.args.args]
    with_default = positional[len(positional) - len(func.args.defaults) :]
    defaults = {a.arg: d for a, d in zip(with_default, func.args.defaults, strict=True)}
    kw_pairs = zip(func.args.kwonlyargs, func.args.kw_defaults, strict=True)
    defaults.update({a.arg: d for a, d in kw_pairs if d is not None})
    scope = Scope(
        params={a.arg: a for a in args}, outer=top, param_order=[a.arg for a in args], defaults=defaults
    )
    _collect_bindings(func.body, before_line, scope.bindings)
    return scope
