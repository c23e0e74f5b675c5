"""Registry of every rule tritonlens can report, at every level.

Codes are stable: TL0xx front end (syntax, specialization), TL1xx pattern triage, TL2xx profiling,
TL3xx NVIDIA compiler-grounded, TL4xx Ascend compiler-grounded, TL5xx rewrites.
"""

from __future__ import annotations

from dataclasses import dataclass

from tritonlens.analysis.findings import PLATFORMS, Level, Severity


@dataclass(frozen=True)
class Rule:
    code: str
    name: str  # kebab-case, like Nsight Compute rule names: "uncoalesced-global-access"
    title: str
    level: Level
    severity: Severity
    platforms: tuple[str, ...]
    rationale: str  # Markdown: what is slow, on which hardware, why, what to do
    references: tuple[str, ...] = ()  # docs, tutorials, issues the rule is grounded in
    has_fix: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "name": self.name,
            "title": self.title,
            "level": int(self.level),
            "severity": self.severity.name.lower(),
            "platforms": list(self.platforms),
            "rationale": self.rationale,
            "references": list(self.references),
            "has_fix": self.has_fix,
        }


_RULES: dict[str, Rule] = {}


def register(rule: Rule) -> Rule:
    if rule.code in _RULES and _RULES[rule.code] != rule:
        raise ValueError(f"rule code {rule.code} registered twice")
    unknown = set(rule.platforms) - set(PLATFORMS)
    if unknown:
        raise ValueError(f"rule {rule.code}: unknown platforms {sorted(unknown)}")
    _RULES[rule.code] = rule
    return rule


def get(code: str) -> Rule | None:
    _load_all()
    return _RULES.get(code)


def all_rules() -> list[Rule]:
    _load_all()
    return sorted(_RULES.values(), key=lambda r: r.code)


def _load_all() -> None:
    # Rule modules register themselves on import; import them here so the registry is complete.
    import importlib

    for module in _RULE_MODULES:
        importlib.import_module(module)


# Each level's package appends its rule-defining modules here (kept explicit so import order is obvious).
_RULE_MODULES: list[str] = [
    "tritonlens.analysis.front_rules",
    "tritonlens.analysis.compile_errors",
    "tritonlens.analysis.compiler_cuda_rules",
    "tritonlens.analysis.compiler_ascend_rules",
    # Level 1 pattern triage (analysis/triage/).
    "tritonlens.analysis.triage.blocks",
    "tritonlens.analysis.triage.parallelism",
    "tritonlens.analysis.triage.loops",
    "tritonlens.analysis.triage.memory",
    "tritonlens.analysis.triage.dot",
    "tritonlens.analysis.triage.grid",
    "tritonlens.analysis.triage.ascend",
    "tritonlens.analysis.triage.hygiene",
    "tritonlens.analysis.profiling_rules",
]
