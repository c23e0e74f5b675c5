"""What a kernel's compile reads from its file, for the compile-cache key: the text of the kernel, of every
top-level function it reaches by name (its jit helpers, transitively; functions under a module-level `if`/`try`
count as top-level) and of the module-level statements, and
the modules the file imports. Read from the shared parse (`parse_module`): a cache key never parses again."""

from __future__ import annotations

import ast

from .parse import parse_module

_MEMO = "dependencies.sources"


def dependency_sources(source: str, kernel: str) -> dict[str, str] | None:
    """The text the kernel's compile depends on: "<name>@<first line>" -> source segment.

    Holds the kernel, every top-level function it reaches by name (its @triton.jit helpers, transitively)
    and the module-level statements other than function/class definitions and the __main__ block.
    None when the buffer does not parse or has no such function (callers then key on the whole buffer).
    Memoised per kernel in the model of this text: the warm path asks again for the same buffer.
    """
    module = parse_module(source)
    key = (_MEMO, kernel)
    if key not in module.memo:
        module.memo[key] = _dependency_sources(module.tree, source, kernel)
    found = module.memo[key]
    return dict(found) if found is not None else None


def _is_main_guard(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and "__name__" in ast.unparse(stmt.test)


def _opened(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module-level statements with `if`/`try` blocks opened (kernels under `if has_triton():`): each block's
    header stays (its test is a dependency too), followed by the statements of every branch."""
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, ast.If) and not _is_main_guard(stmt):
            out += _opened([*stmt.body, *stmt.orelse])
        elif isinstance(stmt, ast.Try):
            out += _opened(
                [*stmt.body, *(s for h in stmt.handlers for s in h.body), *stmt.orelse, *stmt.finalbody]
            )
    return out


def _header_end(stmt: ast.stmt) -> int | None:
    """The last line of a block's header (`if a and\n b:` spans two); None for a plain statement."""
    if isinstance(stmt, ast.If):
        return stmt.test.end_lineno
    if isinstance(stmt, ast.Try):
        return stmt.lineno
    return None


def _dependency_sources(tree: ast.Module | None, source: str, kernel: str) -> dict[str, str] | None:
    if tree is None:
        return None
    statements = _opened(tree.body)
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for stmt in statements:  # every def of a name (the Triton side of a guard and its `else:` stand-in alike)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(stmt.name, []).append(stmt)
    if kernel not in functions:
        return None
    lines = source.splitlines()

    def text(first: int, last: int | None) -> str:
        return "\n".join(lines[first - 1 : last or first])

    out: dict[str, str] = {}
    todo = [kernel]
    while todo:
        name = todo.pop()
        for node in functions[name]:
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            out[f"{name}@{first}"] = text(first, node.end_lineno)
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and sub.id in functions and sub.id != name:
                    if not any(k.startswith(f"{sub.id}@") for k in out) and sub.id not in todo:
                        todo.append(sub.id)
    for stmt in statements:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or _is_main_guard(stmt):
            continue
        header = _header_end(stmt)  # an opened block: its header only, its statements come on their own
        out[f"<module>@{stmt.lineno}"] = text(stmt.lineno, header or stmt.end_lineno)
    return out


def imported_modules(tree: ast.AST) -> tuple[tuple[int, str], ...]:
    """(level, dotted module) of every import under `tree`: `from .a import b` gives (1, "a") and (1, "a.b")."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((0, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            out.append((node.level, base))
            # `from . import utils` / `from pkg import mod` may name a module, not an attribute.
            out.extend(
                (node.level, f"{base}.{a.name}" if base else a.name) for a in node.names if a.name != "*"
            )
    return tuple(o for o in out if o[1])


def module_imports(source: str) -> tuple[tuple[int, str], ...]:
    """`imported_modules` of the buffer, from its shared parse (empty when it does not parse)."""
    tree = parse_module(source).tree
    return imported_modules(tree) if tree is not None else ()
