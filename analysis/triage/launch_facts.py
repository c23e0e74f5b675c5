"""Launch sites of a file with the scope each runs in (specialization_launch's call index), built once per parsed
tree and shared by the triage rules that resolve launch arguments (block sizes, num_warps, tensor shapes). No rules
here."""

from __future__ import annotations

import ast

from ..specialize.scope import CallIndex, Launch, find_launches, index_calls

# One call index per parsed tree, shared by every kernel of the file; kept on the tree so it dies with it (the
# index refers to its tree: in a weak-keyed table it kept every tree alive).
_ATTRIBUTE = "_tritonlens_call_index"


def call_index(tree: ast.Module) -> CallIndex:
    index: CallIndex | None = tree.__dict__.get(_ATTRIBUTE)
    if index is None:
        index = index_calls(tree)
        setattr(tree, _ATTRIBUTE, index)
    return index


def launches(tree: ast.Module | None, kernel: str) -> list[Launch]:
    """Every launch of `kernel` with its scope (empty without a tree)."""
    return find_launches(call_index(tree), kernel) if tree is not None else []


__all__ = ["call_index", "launches"]
