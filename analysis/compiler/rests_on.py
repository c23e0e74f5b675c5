"""Which of a kernel's launch values a level 3-4 finding rests on, so a finding whose cause is a guess is told
apart from one that holds whatever the guessed values are.

A finding sits on a source line; the line's statement reads names, and each name was assigned (in the kernel's
body, flow-insensitively) from other names, down to the kernel's parameters. The statements of an `if`/`while`
body also read its test (the branch exists in the compile only for the values that take it). A finding on a jit
helper's line or the kernel's `def` line, or of a rule about the whole compile's budget (`DependsOn.COMPILE`),
rests on every value of the compile: nothing narrower can be said of it. One on a launch site (outside every jit
function) rests on what it names, since the site shows its own values.
Pure: AST in, names out.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

LineInputs = Callable[[int], "frozenset[str] | None"]


def _names(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _targets(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _header(stmt: ast.stmt) -> set[str]:
    """Names a compound statement's own line reads (its test or iterator), not its body's."""
    if isinstance(stmt, (ast.If, ast.While)):
        return _names(stmt.test)
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return _names(stmt.iter) | _names(stmt.target)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return set().union(*(_names(i.context_expr) for i in stmt.items))
    return _names(stmt)


def line_inputs(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    jit_functions: Iterable[ast.FunctionDef | ast.AsyncFunctionDef] = (),
) -> LineInputs:
    """line -> the parameters of `function` its statement depends on; None for its `def` line and decorators and
    for a line of another of the file's `jit_functions` (a helper it may inline: every value counts); empty for a
    line outside every jit function (a launch site: what it shows is visible, not a guess of the kernel's)."""
    jit_spans = [(min([f.lineno, *(d.lineno for d in f.decorator_list)]), f.end_lineno or f.lineno)
                 for f in (function, *jit_functions)]
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    flows: dict[str, set[str]] = {}  # a local -> the names its assignments read
    lines: list[tuple[int, int, set[str]]] = []  # (first, last, names read) of each statement, innermost last

    def visit(body: Iterable[ast.stmt], guards: set[str]) -> None:
        for stmt in body:
            read = _header(stmt) | guards
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = [stmt.target] if not isinstance(stmt, ast.Assign) else stmt.targets
                value = _names(stmt.value) | guards
                if isinstance(stmt, ast.AugAssign):
                    value |= _names(stmt.target)
                for t in targets:
                    for name in _targets(t):
                        flows.setdefault(name, set()).update(value)
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                for name in _targets(stmt.target):
                    flows.setdefault(name, set()).update(_names(stmt.iter))
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                for item in stmt.items:
                    for name in _targets(item.optional_vars) if item.optional_vars else ():
                        flows.setdefault(name, set()).update(_names(item.context_expr))
            end = stmt.lineno if hasattr(stmt, "body") else (stmt.end_lineno or stmt.lineno)
            lines.append((stmt.lineno, end, read))
            inner = guards | (_names(stmt.test) if isinstance(stmt, (ast.If, ast.While)) else set())
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(stmt, field, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    visit(sub, inner)
            for handler in getattr(stmt, "handlers", ()):
                visit(handler.body, inner)

    visit(function.body, set())
    resolved: dict[str, frozenset[str]] = {}

    def closure(names: set[str]) -> frozenset[str]:
        seen: set[str] = set()
        todo = list(names)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(flows.get(name, ()))
        return frozenset(seen & params)

    def inputs(line: int) -> frozenset[str] | None:
        covering = [names for first, last, names in lines if first <= line <= last]
        if not covering:
            return None if any(first <= line <= last for first, last in jit_spans) else frozenset()
        key = str(line)
        if key not in resolved:
            resolved[key] = closure(covering[-1])
        return resolved[key]

    return inputs
