"""Launch sites of a file with the scope each runs in (specialization_launch's call index), built once per parsed
tree and shared by the triage rules that resolve launch arguments (block sizes, num_warps, tensor shapes). No rules
here."""

from __future__ import annotations

import ast

from ..specialize.scope import CallIndex, Launch, find_launches, index_calls
from ..state.session import current


def call_index(tree: ast.Module) -> CallIndex:
    """One call index per parsed tree, shared by every kernel of the file; kept by the session in force (weakly:
    dropped with the tree)."""
    session = current()
    with session.call_index_lock:
        index = session.call_index.get(tree)
    if index is None:
        index = index_calls(tree)
        with session.call_index_lock:
            session.call_index[tree] = index
    return index  # type: ignore[no-any-return]


def launches(tree: ast.Module | None, kernel: str) -> list[Launch]:
    """Every launch of `kernel` with its scope (empty without a tree)."""
    return find_launches(call_index(tree), kernel) if tree is not None else []


__all__ = ["call_index", "launches"]
