"""Where candidates come from. Every source implements one small protocol, so the loop treats recipes, config
search and an LLM alike and the gate sees only `Candidate`s.

    class Proposer(Protocol):
        name: str
        def propose(self, ctx: RecipeContext, feedback: Sequence[Verdict]) -> list[Candidate]: ...

`ctx` is the current state of the file (after the rewrites accepted so far) with every level's findings for it;
`feedback` is every Verdict the gate gave this proposer's earlier candidates for this kernel (rejections carry
`stage` and `reason`: compile errors, mismatches with shapes and errors, timings with their spread), so an
iterative proposer (the LLM) can repair its last attempt. A proposer must not raise for bad input: it returns
[] and records why in `declined` (shown in the report). It must return whole-file texts (Candidate.source); it
never runs code (only the gate does, on a runner).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ....analysis.rewrite.model import Candidate, NotApplicable, Recipe, RecipeContext, Verdict


@runtime_checkable
class Proposer(Protocol):
    name: str

    def propose(self, ctx: RecipeContext, feedback: Sequence[Verdict]) -> list[Candidate]: ...


@dataclass
class Declined:
    proposer: str
    kernel: str
    reason: str


@dataclass
class RecipeProposer:
    """Level-5 recipes keyed by the codes of the findings present (analysis/rewrite/registry.recipes_for)."""

    recipes: Sequence[Recipe] | None = None  # None: the registry's recipes
    name: str = "recipes"
    declined: list[Declined] = field(default_factory=list)

    def _recipes(self, codes: set[str]) -> list[Recipe]:
        from ....analysis.rewrite.registry import applies_to, recipes_for

        if self.recipes is not None:
            return [r for r in self.recipes if applies_to(r, codes)]
        return recipes_for(codes)

    def propose(self, ctx: RecipeContext, feedback: Sequence[Verdict]) -> list[Candidate]:
        codes = {f.code for f in ctx.findings if f.kernel in (ctx.kernel, None)}
        tried = {v.candidate_id for v in feedback}
        out: list[Candidate] = []
        for recipe in self._recipes(codes):
            try:
                proposed = recipe.propose(ctx)
            except Exception as exc:  # a recipe bug must not stop the loop; it is reported
                self.declined.append(Declined(recipe.name, ctx.kernel, f"crashed: {type(exc).__name__}: {exc}"))
                continue
            if isinstance(proposed, NotApplicable):
                self.declined.append(Declined(recipe.name, ctx.kernel, proposed.reason))
                continue
            for cand in proposed:
                if cand.source == ctx.source:
                    self.declined.append(Declined(recipe.name, ctx.kernel, "proposed the unchanged file"))
                elif cand.id not in tried:
                    out.append(cand)
        return out


def llm_proposer(base_url: str | None, model: str | None, **settings: object) -> Proposer | None:
    """The LLM proposer, when the module that implements it exists (server/engine/optimize/llm.py,
    `make_proposer(base_url, model, **settings) -> Proposer`). None when it is absent or not configured."""
    if not base_url or not model:
        return None
    name = f"{__name__.rpartition('.')[0]}.llm"
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name).make_proposer(base_url, model, **settings)  # type: ignore[no-any-return]
