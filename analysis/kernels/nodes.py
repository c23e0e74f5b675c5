"""Walking the tree cheaply: statements with their qualname and scope, expressions of one statement's header,
names a scope binds once, and `FunctionTree` (one function's nodes with parent/children links)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..source.node_walk import child_nodes as _children
from ..source.node_walk import walk_nodes

# Fields that hold nested statements; everything else of a statement is its "header" (expressions).
BODY_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def walk_statements(
    root: ast.AST, prefix: str = "", scope: str | None = None, scope_node: ast.AST | None = None
) -> Iterator[tuple[ast.AST, str, str | None, ast.AST | None]]:
    """Every statement (not expression) under `root` with its qualname prefix, enclosing def name and node
    (`scope_node` as given for statements of the root's own scope: None stands for the module).

    Walking statements only is several times cheaper than `ast.walk`; expressions are visited only where
    needed (decorators, and lines that may hold a launch)."""
    stack: list[tuple[ast.AST, str, str | None, ast.AST | None]] = [(root, prefix, scope, scope_node)]
    while stack:
        node, prefix, scope, scope_node = stack.pop()
        for fname in BODY_FIELDS:
            children = getattr(node, fname, None)
            if not isinstance(children, list):
                continue
            for child in reversed(children):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    qual = f"{prefix}{child.name}"
                    stack.append((child, f"{qual}.<locals>.", child.name, child))
                    yield child, qual, scope, scope_node
                elif isinstance(child, ast.ClassDef):
                    qual = f"{prefix}{child.name}"
                    stack.append((child, f"{qual}.", scope, scope_node))
                    yield child, qual, scope, scope_node
                else:
                    stack.append((child, prefix, scope, scope_node))
                    yield child, prefix, scope, scope_node


def top_entry(stmt: ast.stmt) -> tuple[str, str, str | None, ast.AST | None]:
    """(qualname, prefix for its body, scope, scope node) of a top-level statement; None is the module."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return stmt.name, f"{stmt.name}.<locals>.", stmt.name, stmt
    if isinstance(stmt, ast.ClassDef):
        return stmt.name, f"{stmt.name}.", None, None
    return "", "", None, None


def _is_interesting(node: ast.AST) -> bool:
    """Statements `build` looks at: imports and decorated defs."""
    return isinstance(node, (ast.Import, ast.ImportFrom)) or (
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and bool(node.decorator_list)
    )


def header_nodes(stmt: ast.AST) -> Iterator[ast.AST]:
    """Every expression node of a statement outside its nested statement bodies."""
    for fname, value in ast.iter_fields(stmt):
        if fname in BODY_FIELDS:
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.AST):
                yield from walk_nodes(item)


Entry = tuple[ast.AST, str, str | None, ast.AST | None]


def single_assignments(scope: ast.AST) -> dict[str, ast.AST]:
    """name -> value for names the scope (not its nested defs) binds exactly once, by `=` (or `x: T = v`)."""
    values: dict[str, list[ast.AST | None]] = {}
    stack: list[ast.AST] = [scope]
    while stack:
        parent = stack.pop()
        for fname in BODY_FIELDS:
            for node in getattr(parent, fname, None) or ():
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    values.setdefault(node.name, []).append(None)
                    continue
                stack.append(node)
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        simple = isinstance(target, ast.Name)
                        for name in _target_names(target):
                            values.setdefault(name, []).append(node.value if simple else None)
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
                    keep = node.value if isinstance(node, ast.AnnAssign) else None
                    for name in _target_names(node.target):
                        values.setdefault(name, []).append(keep)
    return {name: found[0] for name, found in values.items() if len(found) == 1 and found[0] is not None}


def _target_names(target: ast.AST) -> set[str]:
    return (
        {target.id}
        if isinstance(target, ast.Name)
        else {n.id for n in walk_nodes(target) if isinstance(n, ast.Name)}
    )


# Fields holding shared singleton nodes (Load/Store, operators) that never matter as tree nodes.
class FunctionTree:
    """Every node of one function (breadth first) with parent and children links, and cached subtree walks."""

    def __init__(self, root: ast.AST) -> None:
        self.root = root
        self.nodes: list[ast.AST] = [root]
        self.parents: dict[int, ast.AST] = {}
        self.children: dict[int, list[ast.AST]] = {}
        index = 0
        nodes = self.nodes
        while index < len(nodes):
            node = nodes[index]
            index += 1
            kids = _children(node)
            if kids:
                self.children[id(node)] = kids
                for kid in kids:
                    self.parents[id(kid)] = node
                nodes.extend(kids)
        self._walks: dict[int, list[ast.AST]] = {id(root): nodes}

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """The subtree under `node` (node first), cached; nodes outside this function are walked directly."""
        cached = self._walks.get(id(node))
        if cached is None:
            if id(node) not in self.parents:
                cached = walk_nodes(node)
            else:
                cached = [node]
                index = 0
                children = self.children
                while index < len(cached):
                    cached.extend(children.get(id(cached[index]), ()))
                    index += 1
            self._walks[id(node)] = cached
        return cached
