"""Registry of every rule tritonlens can report, at every level.

Codes are stable: TL0xx front end (syntax, specialization), TL1xx pattern triage, TL2xx profiling,
TL3xx NVIDIA compiler-grounded, TL4xx Ascend compiler-grounded, TL5xx rewrites.
"""

from __future__ import annotations

from dataclasses import dataclass

from .findings import PLATFORMS, Level, Severity


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
    # Some findings are raised above the rule's usual severity (e.g. TL101 is an error when the kernel cannot compile):
    # declared here so `tritonlens rules` states every severity the editor may show.
    escalates_to: Severity | None = None
    escalation: str = ""  # when it escalates, in words

    @property
    def max_severity(self) -> Severity:
        # LSP numbering: ERROR (1) is the most severe, so the most severe is the smaller number
        return min(self.severity, self.escalates_to or self.severity)

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "name": self.name,
            "title": self.title,
            "level": int(self.level),
            "severity": self.severity.name.lower(),
            "max_severity": self.max_severity.name.lower(),
            "escalation": self.escalation,
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
    # Rule modules register themselves on import. They are discovered, not listed: every module of the
    # `analysis` package is imported once (all are pure Python over text, cheap to import), so a new rule is
    # one new file.
    global _loaded
    if _loaded:
        return
    import importlib
    import pkgutil

    package = importlib.import_module(__package__)
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{__package__}."):
        importlib.import_module(info.name)
    _loaded = True


_loaded = False
