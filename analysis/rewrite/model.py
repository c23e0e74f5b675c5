"""The data model of level 5: what a recipe sees, what it proposes, and why it declines.

A candidate is always a whole new file text (the user's file with the rewrite applied), so every source of
candidates (recipes, config search, an LLM) feeds the same verification gate and the same editor edit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.findings import Finding
from ..core.targets import DEFAULT_CUDA_TARGET
from ..kernels import ModuleInfo

ORIGINS = ("recipe", "config", "llm")
ANY_KERNEL = "*"  # a Recipe key: tried on every kernel (schedules decide from the computation model)


@dataclass(frozen=True)
class RecipeContext:
    source: str  # the whole file as the editor has it
    path: str
    kernel: str  # the jit function to rewrite
    module: ModuleInfo  # parse_module(source), parsed once by the caller
    findings: tuple[Finding, ...] = ()  # every level's findings for this file (levels 1-4, profiling)
    target: str = DEFAULT_CUDA_TARGET  # the compile target, e.g. "sm_90", "ascend910b3"
    profile: dict[str, Any] | None = None  # the runner's RunResult dict for this file, when profiled

    def findings_with(self, *codes: str) -> list[Finding]:
        return [f for f in self.findings if f.code in codes and f.kernel in (self.kernel, None)]


@dataclass(frozen=True)
class NotApplicable:
    """A recipe that does not apply says why; it is never offered."""

    recipe: str
    reason: str


@dataclass(frozen=True)
class Candidate:
    source: str  # the whole new file text
    origin: str  # one of ORIGINS
    producer: str  # recipe name, "config-search", or the LLM model name
    kernel: str
    title: str  # one line: what changed ("accumulate a vector, reduce once after the loop")
    rationale: str  # Markdown: which evidence motivated it and why it should be faster
    evidence: tuple[str, ...] = ()  # codes of the findings that motivated it ("TL104", "TL305", "TL202")
    level: int = 1  # the highest level whose evidence drove it (1 triage, 2 profiling, 3-4 compiler)
    config: dict[str, Any] = field(default_factory=dict)  # for config candidates: the chosen values
    parent: str | None = None  # id of the candidate this one was derived from

    @property
    def id(self) -> str:
        import hashlib

        return hashlib.sha256(f"{self.kernel}\0{self.source}".encode()).hexdigest()[:12]


class Recipe(Protocol):
    name: str  # kebab-case, stable: "vector-accumulator"
    title: str
    keys: tuple[str, ...]  # finding codes it reacts to (tried only when one is present), or (ANY_KERNEL,)

    def propose(self, ctx: RecipeContext) -> list[Candidate] | NotApplicable: ...


@dataclass(frozen=True)
class Verdict:
    """What the verification gate decided about one candidate; fed back to proposers (e.g. the LLM)."""

    candidate_id: str
    accepted: bool
    reason: str  # why it was rejected, or a one-line summary of what was measured
    stage: str = ""  # where it stopped: "compile" | "correctness" | "unseen-shape" | "timing" | "budget" (cut by the
    # optimize time budget, no verdict on the candidate) | "" (accepted)
    speedup: float | None = None  # median time of the baseline / median time of the candidate
    spread: float | None = None  # relative spread of the speedup across interleaved repeats
    max_error: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
