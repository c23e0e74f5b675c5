"""Recipes are discovered, not listed: each module in `recipes/` defines `RECIPE`."""

from __future__ import annotations

import importlib
import pkgutil

from ..state.session import current
from .model import Recipe


def all_recipes() -> list[Recipe]:
    """Every recipe, discovered once per session (analysis/state/session.py)."""
    session = current()
    if session.recipes is None:
        from . import recipes

        found: dict[str, Recipe] = {}
        for info in pkgutil.iter_modules(recipes.__path__):
            module = importlib.import_module(f"{recipes.__name__}.{info.name}")
            recipe = getattr(module, "RECIPE", None)
            if recipe is None:
                continue
            if recipe.name in found:
                raise ValueError(f"recipe {recipe.name} defined twice")
            found[recipe.name] = recipe
        session.recipes = found
    return sorted(session.recipes.values(), key=lambda r: r.name)


def recipes_for(codes: set[str]) -> list[Recipe]:
    return [r for r in all_recipes() if set(r.keys) & codes]
