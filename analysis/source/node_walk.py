"""Walking a syntax tree without `ast.walk`'s generators and without the expression-context and operator
singletons (`ast.Load`, `ast.Add`, ...): leaves no rule looks for, so a walk keeps every other node in `ast.walk`'s
order (breadth first), and a depth-first walk visits them in the same order too. About twice as fast."""

from __future__ import annotations

import ast

_SKIP_FIELDS = frozenset(("ctx", "op", "ops"))
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(node_type: type) -> tuple[str, ...]:
    fields = _FIELDS.get(node_type)
    if fields is None:
        fields = tuple(f for f in node_type._fields if f not in _SKIP_FIELDS)
        _FIELDS[node_type] = fields
    return fields


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes` as a list, without the expression-context and operator singletons (leaves)."""
    out: list[ast.AST] = []
    node_type = ast.AST
    for name in _fields(type(node)):
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(item for item in value if isinstance(item, node_type))
        elif isinstance(value, node_type):
            out.append(value)
    return out


def walk_nodes(root: ast.AST) -> list[ast.AST]:
    """Like `ast.walk` (breadth first, root included) but faster, returning a list and skipping the
    expression-context and operator singletons (`ast.Load`, `ast.Add`, ...)."""
    nodes = [root]
    index = 0
    while index < len(nodes):
        nodes.extend(child_nodes(nodes[index]))
        index += 1
    return nodes


__all__ = ["child_nodes", "walk_nodes"]
