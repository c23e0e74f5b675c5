"""The proposers one optimize run asks, in the order the loop asks them: the recipes, config search (it waits for
the recipes, loop._propose), then the LLM when one is configured. The editor, `tritonlens optimize` and
`tritonlens bench` all build them here, so a new proposer is added in one place."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from .config_screen import ConfigScreen
from .config_search import ConfigSearch
from .proposers import Proposer, RecipeProposer

if TYPE_CHECKING:  # the runner client is imported where a runner is made, not by the engine
    from ....ascend_runner.client import Runner

CONFIG_SEARCH_WORKERS = 2  # parallel compiles of config search's moves (ConfigSearch.workers)


def build_proposers(
    runner: Runner,
    target: str,
    backend: str,
    *,
    config_search: bool = True,
    llm: Proposer | None = None,
    workers: int = CONFIG_SEARCH_WORKERS,
    cancel: threading.Event | None = None,
) -> list[Proposer]:
    """Fresh proposers for one run (they keep what they declined and pruned, so never share them across runs).
    `config_search`: include config search (it compiles on `runner` for `target`); `llm`: the LLM proposer, made
    by proposers.llm_proposer from the caller's settings; `cancel` stops config search's compiles."""
    found: list[Proposer] = [RecipeProposer()]
    if config_search:
        screen = ConfigScreen(runner, backend, workers=workers, cancel=cancel) if backend != "interpret" else None
        found.append(ConfigSearch(runner, target, backend=backend, workers=workers, cancel=cancel, screen=screen))
    if llm is not None:
        found.append(llm)
    return found
