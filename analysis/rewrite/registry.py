"""Recipes are discovered, not listed: each module in `recipes/` defines `RECIPE`."""

from __future__ import annotations

import importlib
import pkgutil

from .model import Recipe

_RECIPES: dict[str, Recipe] | None = None


def all_recipes() -> list[Recipe]:
    global _RECIPES
    if _RECIPES is None:
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
        _RECIPES = found
    return sorted(_RECIPES.values(), key=lambda r: r.name)


def recipes_for(codes: set[str]) -> list[Recipe]:
    return [r for r in all_recipes() if set(r.keys) & codes]
