"""Which kernel parameters the statement a compile error blames reads, directly or through the kernel's own
assignments: a failure that reads none of the guessed values is the kernel's whatever the guess (an `if` whose
branches give one variable two types fails at every launch), one that reads a guess may be the guess's. Pure: the
source text in, names out; flow-insensitive, so it errs towards "reads the guess".
"""

from __future__ import annotations

import ast
from collections.abc import Collection


def guessed_reads(source: str, kernel: str, line: int | None, guessed: Collection[str]) -> set[str] | None:
    """The guessed parameters the statement at `line` of `kernel` depends on; None where that cannot be read
    (no such kernel or line, a file that does not parse): then every guess is a suspect."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == kernel), None)
    if fn is None or not line:
        return None
    statement = _innermost_statement(fn, line)
    if statement is None:
        return None
    feeds: dict[str, set[str]] = {}  # name -> names its assigned values read, anywhere in the kernel
    for node in ast.walk(fn):
        targets, value = _assignment(node)
        for target in targets:
            for name in _names(target, stored=True):
                feeds.setdefault(name, set()).update(_names(value) if value is not None else ())
    seen: set[str] = set()
    todo = list(_names(statement) | _names(statement, stored=True))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(feeds.get(name, ()))
    return seen & set(guessed)


def _innermost_statement(fn: ast.FunctionDef, line: int) -> ast.stmt | None:
    found = None
    for node in ast.walk(fn):
        if isinstance(node, ast.stmt) and node is not fn and node.lineno <= line <= (node.end_lineno or node.lineno):
            if found is None or node.lineno >= found.lineno and (node.end_lineno or 0) <= (found.end_lineno or 0):
                found = node
    return found


def _assignment(node: ast.AST) -> tuple[list[ast.expr], ast.expr | None]:
    if isinstance(node, ast.Assign):
        return node.targets, node.value
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target], node.value
    if isinstance(node, ast.For):  # `for j in range(start, end)`: j reads start and end
        return [node.target], node.iter
    if isinstance(node, ast.NamedExpr):
        return [node.target], node.value
    return [], None


def _names(node: ast.AST, stored: bool = False) -> set[str]:
    want = ast.Store if stored else ast.Load
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, want)}
