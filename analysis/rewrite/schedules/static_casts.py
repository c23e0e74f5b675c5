"""Static branches that only recast a tile (`if UPCAST: k = k.to(tl.float32)`, a constexpr test): drafts upcast
bf16 tiles this way for the CPU interpreter, whose bf16 dot is wrong. A schedule that re-emits the loads carries
the branch after its own load of the same tile, under the same test (flash attention's Q/K/V/P, the dot
schedule's operands), instead of declining the loop for having a branch."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..kernel_patterns import uncast
from ..recipe_kit import KernelSource


@dataclass
class StaticCast:
    """A static branch (`if FLAG:` on constexprs) whose statements only recast one tile: `k = k.to(tl.float32)`."""

    node: ast.If
    target: str
    test: str
    suffixes: list[str]  # the text after the name on each right-hand side (`.to(tl.float32)`)


def cast_branches(ks: KernelSource, stmts: list[ast.stmt]) -> list[StaticCast]:
    """The branches among `stmts` a schedule can carry: after it loads (or computes) the tile, it recasts it under
    the same static test."""
    out = []
    constexprs = {p.name for p in ks.info.params if p.is_constexpr}
    for s in stmts:
        if not isinstance(s, ast.If) or s.orelse or not {
                x.id for x in ast.walk(s.test) if isinstance(x, ast.Name)} <= constexprs:
            continue
        per_target: dict[str, list[str]] = {}
        for a in s.body:
            if not (isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)):
                break
            name, node = a.targets[0].id, uncast(a.value)
            if not (isinstance(node, ast.Name) and node.id == name and node is not a.value):
                break
            per_target.setdefault(name, []).append(ks.segment(a.value)[len(name):])
        else:
            for name, suffixes in per_target.items():
                out.append(StaticCast(s, name, ks.segment(s.test), suffixes))
    return out


def recast(casts: list[StaticCast], target: str | None, name: str) -> list[str]:
    """The draft's static recasts of `target`, re-emitted on the schedule's `name` for it."""
    out = []
    for b in casts:
        if target is not None and b.target == target:
            out += [f"if {b.test}:", *[f"    {name} = {name}{suffix}" for suffix in b.suffixes]]
    return out
