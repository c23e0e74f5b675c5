"""Facts derived from one AST node alone, remembered for as long as the node lives.

The editor's incremental parse (analysis/source/chunks.py) hands back the same statement objects for the chunks a
keystroke did not touch, so a whole-module pass written as "merge one result per top-level statement" costs a
lookup per unchanged statement and a walk of the edited one only, instead of a walk of the whole document on
every keystroke. Results must be derived from the node's own subtree (never from its position among others) and
must not be mutated by callers. Kept by the session in force (analysis/state/session.py). Thread-safe (the language server triages in worker threads).
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable
from typing import TypeVar

from ..state.lru import MISSING
from ..state.session import current

T = TypeVar("T")


def per_node(what: str, node: ast.AST, compute: Callable[[ast.AST], T]) -> T:
    """`compute(node)`, computed once per (what, node object) in the session in force."""
    session = current()
    with session.node_memo_lock:
        table = session.node_memo.get(what)
        if table is None:
            table = session.node_memo[what] = weakref.WeakKeyDictionary()
        hit = table.get(node, MISSING)
    if hit is not MISSING:
        return hit  # type: ignore[no-any-return]
    value = compute(node)
    with session.node_memo_lock:
        table[node] = value
    return value
