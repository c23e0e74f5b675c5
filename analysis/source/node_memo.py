"""Facts derived from one AST node alone, remembered for as long as the node lives.

The editor's incremental parse (analysis/source/chunks.py) hands back the same statement objects for the chunks a
keystroke did not touch, so a whole-module pass written as "merge one result per top-level statement" costs a
lookup per unchanged statement and a walk of the edited one only, instead of a walk of the whole document on
every keystroke. Results must be derived from the node's own subtree (never from its position among others) and
must not be mutated by callers. Thread-safe (the language server triages in worker threads).

The memo lives on the node itself (an attribute), not in a weak-keyed table: a value often refers to its own node
(a statement's function definitions include the statement), and a weak-keyed table holds values strongly, so
the node would never die and every tree of every version stayed alive. On the node, the cycle dies with the tree.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from .node_walk import walk_nodes

T = TypeVar("T")

_ATTRIBUTE = "_tritonlens_memo"
_MISSING: Any = object()
_LOCK = threading.Lock()


def per_node(what: str, node: ast.AST, compute: Callable[[ast.AST], T]) -> T:
    """`compute(node)`, computed once per (what, node object)."""
    with _LOCK:
        table: dict[str, Any] | None = node.__dict__.get(_ATTRIBUTE)
        if table is None:
            table = {}
            setattr(node, _ATTRIBUTE, table)
        hit = table.get(what, _MISSING)
    if hit is not _MISSING:
        return hit  # type: ignore[no-any-return]
    value = compute(node)
    with _LOCK:
        table[what] = value
    return value


def subtree(node: ast.AST) -> list[ast.AST]:
    """Every node under `node` (itself included) in `ast.walk` order, less the context and operator singletons
    (node_walk.py), walked once per node object: the whole-file passes of level 1 (function definitions, tuner
    rebinds, allocations, ...) scan this list instead of each walking the tree again (a walk is most of their
    cost)."""
    return per_node("node_memo.subtree", node, _walk)


def _walk(node: ast.AST) -> list[ast.AST]:
    return walk_nodes(node)
