"""Recipes are discovered, not listed: each module in `recipes/` (local edits keyed by findings) and in
`schedules/` (re-emissions of the kernel from its computation model) defines `RECIPE`.

A recipe whose `keys` hold ANY_KERNEL is tried on every kernel: a schedule decides from the model, not from a
finding, whether it applies (and says why not).

Order (the gate verifies candidates in it, and a short time budget may end before the last): schedules first, then
local edits, each by name. A schedule restructures the whole kernel; a local edit keeps the structure, so its gain
is bounded by it, and the next round applies it to the restructured text anyway (measured: with local edits first,
the H200 bench's 40 s per task ended after grouped-program-order on every blind matmul, before its dot schedule)."""

from __future__ import annotations

import importlib
import pkgutil

from ..state.session import current
from .model import ANY_KERNEL, Recipe


def all_recipes() -> list[Recipe]:
    """Every recipe, discovered once per session (analysis/state/session.py)."""
    session = current()
    if session.recipes is None:
        from . import recipes, schedules

        found: dict[str, Recipe] = {}
        for package in (schedules, recipes):  # dicts keep insertion order: schedules first
            names: list[str] = []
            for info in pkgutil.iter_modules(package.__path__):
                module = importlib.import_module(f"{package.__name__}.{info.name}")
                recipe = getattr(module, "RECIPE", None)
                if recipe is None:
                    continue
                if recipe.name in found:
                    raise ValueError(f"recipe {recipe.name} defined twice")
                found[recipe.name] = recipe
                names.append(recipe.name)
            for name in sorted(names):  # by name within a package
                found[name] = found.pop(name)
        session.recipes = found
    return list(session.recipes.values())


def applies_to(recipe: Recipe, codes: set[str]) -> bool:
    return ANY_KERNEL in recipe.keys or bool(set(recipe.keys) & codes)


def recipes_for(codes: set[str]) -> list[Recipe]:
    return [r for r in all_recipes() if applies_to(r, codes)]
