"""Shared by the recipe tests: build a RecipeContext, run one recipe, and check rewrites under the interpreter."""

from __future__ import annotations

import textwrap
from pathlib import Path

from interp_helpers import check_files

from tritonlens.analysis.core.findings import Finding, Level, Severity, Span
from tritonlens.analysis.kernels import parse_module
from tritonlens.analysis.rewrite.model import Candidate, NotApplicable, RecipeContext
from tritonlens.analysis.rewrite.registry import all_recipes

HEADER = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n"


def task(body: str) -> str:
    """A KernelBench-form task from its dedented body (kernels, Model, ModelNew, get_inputs, TEST_SHAPES)."""
    text = textwrap.dedent(body).strip("\n") + "\n"
    if "def get_init_inputs" not in text:
        text += "\n\ndef get_init_inputs():\n    return []\n"
    return HEADER + text


def recipe(name: str) -> object:
    return next(r for r in all_recipes() if r.name == name)


def context(source: str, kernel: str, codes: tuple[str, ...] = (), target: str = "sm_90",
            grid: tuple[int, ...] | None = None) -> RecipeContext:
    """`grid`: a profiled launch of the kernel with this grid (what level 2 measured), when given."""
    findings = tuple(
        Finding(code, "test finding", Span(1, 0, 1, 1), Severity.WARNING, Level.TRIAGE, kernel) for code in codes
    )
    profile = {"launches": [{"kernel": kernel, "grid": list(grid)}]} if grid else None
    return RecipeContext(source, "task.py", kernel, parse_module(source), findings, target, profile)


def propose(name: str, source: str, kernel: str, **kwargs: object) -> list[Candidate] | NotApplicable:
    return recipe(name).propose(context(source, kernel, **kwargs))


def rewrite(name: str, source: str, kernel: str, **kwargs: object) -> list[Candidate]:
    result = propose(name, source, kernel, **kwargs)
    assert not isinstance(result, NotApplicable), result
    assert result and all(c.source != source for c in result)
    return result


def declined(name: str, source: str, kernel: str, **kwargs: object) -> str:
    result = propose(name, source, kernel, **kwargs)
    assert isinstance(result, NotApplicable), result[0].source
    assert result.reason
    return result.reason


def check_correct(sources: dict[str, str], tmp: Path) -> None:
    """Every source (original tasks and rewrites) matches its Model at every TEST_SHAPE under the interpreter."""
    paths = []
    for name, text in sources.items():
        path = tmp / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    records = check_files(paths)
    failures = [r for r in records if not r["ok"]]
    assert not failures, failures
    assert {Path(r["file"]).stem for r in records} == set(sources)


def check_rewrites_correct(tasks: dict[str, tuple[str, str, str]], tmp: Path) -> None:
    """Each task (name -> (schedule or recipe, source, kernel)) and every candidate it rewrites to match their Model
    at every TEST_SHAPE under the interpreter."""
    sources = {}
    for name, (recipe_name, source, kernel) in tasks.items():
        sources[name] = source
        for i, cand in enumerate(rewrite(recipe_name, source, kernel)):
            sources[f"{name}_{i}"] = cand.source
    check_correct(sources, tmp)
