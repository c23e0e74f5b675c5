"""Autotune config lists read from the text, however the file builds them: a literal `[triton.Config(...), ...]`,
a module constant, a helper function called with no arguments (`configs=get_configs()`, its body a `return` of a
list, or a list filled by `for` loops and `append`), list comprehensions over literal values and `range(...)`,
`+` of such lists, and an `if` on a runtime switch that only narrows a list (`configs = configs[:1]`: the whole
list, every config a launch may use, is read). Pure functions over the AST: nothing of the file runs (values
through safe_eval).

Each config is (constexpr values, launch options) with options among num_warps / num_stages / num_ctas / maxnreg.
A list that cannot be read completely is None: a caller never searches, prunes or replays half a list.
"""

from __future__ import annotations

import ast
import itertools
from typing import Any

from ..source.safe_eval import UNKNOWN, evaluate

CONFIG_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
Config = tuple[dict[str, Any], dict[str, Any]]  # (constexpr values, launch options)
MAX_CONFIGS = 4096  # a comprehension larger than this is not a list anyone tunes by hand
_MAX_DEPTH = 6


class _Unreadable(Exception):
    pass


def _name(func: ast.expr) -> str:
    return ast.unparse(func).split(".")[-1]


def decorator(fn: ast.FunctionDef, name: str) -> ast.Call | None:
    """`@triton.<name>(...)` (or `@<name>(...)`) on `fn`."""
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and _name(d.func) == name:
            return d
    return None


def configs_node(call: ast.Call) -> ast.expr | None:
    """The `configs` argument of an `autotune(...)` call (keyword or first positional)."""
    return next((kw.value for kw in call.keywords if kw.arg == "configs"), call.args[0] if call.args else None)


def key_node(call: ast.Call) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == "key"), call.args[1] if len(call.args) > 1 else None)


class _Reader:
    def __init__(self, module: ast.Module | None) -> None:
        body = module.body if module is not None else []
        self.functions = {n.name: n for n in body if isinstance(n, ast.FunctionDef)}
        self.assigns: dict[str, ast.expr] = {}
        for n in body:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                self.assigns[n.targets[0].id] = n.value

    def value(self, node: ast.expr, env: dict[str, Any]) -> Any:
        value = evaluate(node, env)
        if value is UNKNOWN:
            try:
                value = ast.literal_eval(node)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                raise _Unreadable(ast.unparse(node)) from None
        return value

    def iterable(self, node: ast.expr, env: dict[str, Any]) -> list[Any]:
        if isinstance(node, ast.Call) and _name(node.func) == "range" and not node.keywords:
            bounds = [self.value(a, env) for a in node.args]
            if not all(isinstance(b, int) for b in bounds) or not 1 <= len(bounds) <= 3:
                raise _Unreadable(ast.unparse(node))
            return list(range(*bounds))[:MAX_CONFIGS]
        if isinstance(node, ast.Call) and _name(node.func) == "product" and not node.keywords:
            return [tuple(p) for p in itertools.product(*(self.iterable(a, env) for a in node.args))][:MAX_CONFIGS]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return [self.value(e, env) for e in node.elts]
        if isinstance(node, ast.Name) and node.id in env and isinstance(env[node.id], (list, tuple)):
            return list(env[node.id])
        if isinstance(node, ast.Name) and node.id in self.assigns:
            return self.iterable(self.assigns[node.id], env)
        raise _Unreadable(ast.unparse(node))

    def config(self, node: ast.expr, env: dict[str, Any]) -> Config:
        if not (isinstance(node, ast.Call) and _name(node.func) == "Config" and node.args):
            raise _Unreadable(ast.unparse(node))
        kwargs = node.args[0]
        if isinstance(kwargs, ast.Dict):
            values = {}
            for k, v in zip(kwargs.keys, kwargs.values, strict=True):
                if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                    raise _Unreadable(ast.unparse(kwargs))
                values[k.value] = self.value(v, env)
        else:
            values = self.value(kwargs, env)
        if not isinstance(values, dict):
            raise _Unreadable(ast.unparse(kwargs))
        positional = ("num_warps", "num_stages", "num_ctas", "maxnreg")
        options = {name: self.value(a, env) for name, a in zip(positional, node.args[1:], strict=False)}
        options.update({kw.arg: self.value(kw.value, env) for kw in node.keywords if kw.arg in CONFIG_OPTIONS})
        return dict(values), {k: v for k, v in options.items() if v is not None}

    def bind(self, target: ast.expr, item: Any, env: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = item
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(item, (tuple, list)) \
                and len(item) == len(target.elts):
            for t, v in zip(target.elts, item, strict=True):
                self.bind(t, v, env)
        else:
            raise _Unreadable(ast.unparse(target))

    def comprehension(self, elt: ast.expr, gens: list[ast.comprehension], env: dict[str, Any]) -> list[Config]:
        if not gens:
            return [self.config(elt, env)]
        gen, out = gens[0], []
        for item in self.iterable(gen.iter, env):
            inner = dict(env)
            self.bind(gen.target, item, inner)
            if all(self.value(cond, inner) for cond in gen.ifs):
                out.extend(self.comprehension(elt, gens[1:], inner))
            if len(out) > MAX_CONFIGS:
                raise _Unreadable("too many configs")
        return out

    def configs(self, node: ast.expr, env: dict[str, Any], depth: int = 0) -> list[Config]:
        if depth > _MAX_DEPTH:
            raise _Unreadable("too deep")
        if isinstance(node, (ast.List, ast.Tuple)):
            out: list[Config] = []
            for e in node.elts:
                if isinstance(e, ast.Starred):
                    out.extend(self.configs(e.value, env, depth + 1))
                else:
                    out.append(self.config(e, env))
            return out
        if isinstance(node, ast.ListComp):
            return self.comprehension(node.elt, list(node.generators), env)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.configs(node.left, env, depth + 1) + self.configs(node.right, env, depth + 1)
        if isinstance(node, ast.Name) and isinstance(env.get(node.id), list):
            return list(env[node.id])
        if isinstance(node, ast.Name) and node.id in self.assigns:
            return self.configs(self.assigns[node.id], env, depth + 1)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):  # `configs[:1]`
            parts = [self.value(p, env) if p is not None else None
                     for p in (node.slice.lower, node.slice.upper, node.slice.step)]
            if not all(p is None or isinstance(p, int) for p in parts):
                raise _Unreadable(ast.unparse(node))
            return self.configs(node.value, env, depth + 1)[slice(*parts)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions \
                and not node.args and not node.keywords:
            return self.function(self.functions[node.func.id], depth + 1)
        raise _Unreadable(ast.unparse(node))

    def function(self, fn: ast.FunctionDef, depth: int) -> list[Config]:
        """A helper's list: straight-line assignments, `for` loops appending configs, and one `return`."""
        env: dict[str, Any] = {}
        result = self.block(fn.body, env, depth)
        if result is None:
            raise _Unreadable(f"{fn.name}() returns no config list")
        return result

    def either(self, stmt: ast.If, env: dict[str, Any], depth: int) -> None:
        """An `if` whose test is unknown: each branch on a copy of `env`; every name must end up the same in both
        or as a sub-list of the other (`configs = configs[:1]`), and keeps the longer list: every config a launch
        may use. Anything else (a return, different values) is unreadable."""
        ends = []
        for branch in (stmt.body, stmt.orelse):
            copy = {k: list(v) if isinstance(v, list) else v for k, v in env.items()}
            if self.block(branch, copy, depth) is not None:
                raise _Unreadable("return under an unknown condition")
            ends.append(copy)
        for name in set(ends[0]) | set(ends[1]):
            a, b = ends[0].get(name, UNKNOWN), ends[1].get(name, UNKNOWN)
            if a == b:
                env[name] = a
            elif isinstance(a, list) and isinstance(b, list):
                short, long = sorted((a, b), key=len)
                if not all(x in long for x in short):
                    raise _Unreadable(f"{name} differs under an unknown condition")
                env[name] = long
            else:
                raise _Unreadable(f"{name} differs under an unknown condition")

    def block(self, body: list[ast.stmt], env: dict[str, Any], depth: int) -> list[Config] | None:
        for stmt in body:
            if isinstance(stmt, (ast.Expr,)) and isinstance(stmt.value, ast.Constant):
                continue  # a docstring
            if isinstance(stmt, ast.Return) and stmt.value is not None:
                return self.configs(stmt.value, env, depth)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                try:
                    env[stmt.targets[0].id] = self.configs(stmt.value, env, depth)
                except _Unreadable:
                    try:
                        env[stmt.targets[0].id] = self.iterable(stmt.value, env)
                    except _Unreadable:
                        env[stmt.targets[0].id] = self.value(stmt.value, env)
                continue
            if isinstance(stmt, ast.For):
                for item in self.iterable(stmt.iter, env):
                    self.bind(stmt.target, item, env)
                    if self.block(stmt.body, env, depth) is not None:
                        raise _Unreadable("return inside a loop")
                continue
            if isinstance(stmt, ast.If):
                try:
                    decided = self.value(stmt.test, env)
                except _Unreadable:  # a runtime switch (an environment variable): both branches must only narrow
                    self.either(stmt, env, depth)
                    continue
                found = self.block(stmt.body if decided else stmt.orelse, env, depth)
                if found is not None:
                    return found
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr in ("append", "extend") \
                    and isinstance(stmt.value.func.value, ast.Name) \
                    and isinstance(env.get(stmt.value.func.value.id), list) and len(stmt.value.args) == 1:
                target = env[stmt.value.func.value.id]
                if stmt.value.func.attr == "append":
                    target.append(self.config(stmt.value.args[0], env))
                else:
                    target.extend(self.configs(stmt.value.args[0], env, depth + 1))
                if len(target) > MAX_CONFIGS:
                    raise _Unreadable("too many configs")
                continue
            raise _Unreadable(ast.unparse(stmt)[:80])
        return None


def read_configs(node: ast.expr | None, module: ast.Module | None) -> list[Config] | None:
    """The configs `node` (an autotune's `configs` argument) evaluates to, or None when any part is unreadable."""
    if node is None:
        return None
    try:
        return _Reader(module).configs(node, {})
    except (_Unreadable, RecursionError, TypeError):
        return None


def autotune_configs(fn: ast.FunctionDef, module: ast.Module | None) -> list[Config] | None:
    call = decorator(fn, "autotune")
    return read_configs(configs_node(call), module) if call is not None else None


def autotune_key(fn: ast.FunctionDef) -> list[str] | None:
    """The autotune key as a list of names, None when it is not a literal list/tuple of strings."""
    call = decorator(fn, "autotune")
    node = key_node(call) if call is not None else None
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    names = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return names if len(names) == len(node.elts) else None
