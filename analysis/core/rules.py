"""Registry of every rule tritonlens can report, at every level: a rule is one object.

Codes are stable: TL0xx front end (syntax, specialization), TL1xx pattern triage, TL2xx profiling,
TL3xx NVIDIA compiler-grounded, TL4xx Ascend compiler-grounded, TL5xx rewrites.

A `Rule` declares, in its own module, everything the rest of the product needs to know about it: its metadata
(severity, level, platforms, title, rationale), the severities a finding may take besides the usual one, which
lower-level findings it confirms (`confirms`, read by analysis/core/escalation.py), which guessed argument values its
findings depend on (`depends_on`, read by the level 3-4 engine) and, through `register_check`, the checks that
emit it. Every finding is built by `Rule.finding`, so a finding's level, severity and platforms are the ones
its rule declares. Rule modules are discovered, not listed (`_load_all`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .findings import PLATFORMS, Evidence, Finding, Fix, Level, Severity, Span

Predicate = Callable[[Finding, Finding], bool]


@dataclass(frozen=True)
class Confirms:
    """The rule declaring this confirms `lower`: same cause seen at a lower level (see analysis/core/escalation.py)."""

    lower: str
    why: str  # the shared cause, for readers and for the hover
    when: Predicate | None = None  # (higher, lower) -> same culprit/loop/cause, beyond overlapping lines
    portable: bool = False  # the higher evidence is target-independent TTIR: confirms on every platform


class DependsOn(Enum):
    """Which guessed argument values (no launch, pragma or source showed them) a level 3-4 finding depends on."""

    CULPRIT = (
        "culprit"  # the argument it blames (data["culprit"]) or whose narrow access it blames (narrow_lines)
    )
    LINE = "line"  # also a guessed argument whose access is narrow on the finding's own line (a consequence)
    COMPILE = "compile"  # also any guessed argument of the compile: a budget of the whole kernel (registers)
    # also every guess (value or element type) that the loads it lists (data["load_lines"]) read: whether the
    # pipeliner makes a load asynchronous depends on its bytes per thread, so on the pointer's element type
    LOADS = "loads"


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
    # ... or lowered below it (TL402 is info when bishengir does not confirm it)
    lowers_to: Severity | None = None
    lowering: str = ""  # when it is lowered, in words
    confirms: tuple[Confirms, ...] = ()
    depends_on: DependsOn = DependsOn.CULPRIT

    @property
    def max_severity(self) -> Severity:
        # LSP numbering: ERROR (1) is the most severe, so the most severe is the smaller number
        return min(self.severity, self.escalates_to or self.severity)

    @property
    def severities(self) -> frozenset[Severity]:
        """Every severity a finding of this rule may be built with."""
        return frozenset(s for s in (self.severity, self.escalates_to, self.lowers_to) if s is not None)

    @property
    def checks(self) -> tuple[str, ...]:
        """Names of the registered checks that emit this rule."""
        return tuple(c.name for family in _CHECKS.values() for c in family if self.code in c.emits)

    def finding(
        self,
        message: str,
        span: Span,
        *,
        kernel: str | None = None,
        severity: Severity | None = None,
        platforms: Iterable[str] | None = None,
        evidence: Iterable[Evidence] = (),
        fix: Fix | None = None,
        gain: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> Finding:
        """The one way to build a finding of this rule: level from the rule, severity and platforms checked
        against what it declares (a mismatch is a bug of the check, raised so the tests catch it)."""
        severity = self.severity if severity is None else severity
        if severity not in self.severities:
            raise ValueError(
                f"{self.code} declares severities {sorted(s.name.lower() for s in self.severities)}, "
                f"not {severity.name.lower()}: declare it with escalates_to/lowers_to"
            )
        shown = self.platforms if platforms is None else tuple(platforms)
        if not shown or set(shown) - set(self.platforms):
            raise ValueError(f"{self.code} is declared for {list(self.platforms)}, not {list(shown)}")
        return Finding(
            code=self.code,
            message=message,
            span=span,
            severity=severity,
            level=self.level,
            kernel=kernel,
            platforms=shown,
            evidence=tuple(evidence),
            fix=fix,
            estimated_gain=gain,
            data=dict(data or {}),
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "name": self.name,
            "title": self.title,
            "level": int(self.level),
            "severity": self.severity.name.lower(),
            "max_severity": self.max_severity.name.lower(),
            "escalation": self.escalation,
            "lowering": self.lowering,
            "platforms": list(self.platforms),
            "rationale": self.rationale,
            "references": list(self.references),
            "has_fix": self.has_fix,
            "confirms": [c.lower for c in self.confirms],
            "confirmed_by": [r.code for r in all_rules() if any(c.lower == self.code for c in r.confirms)],
            "depends_on": self.depends_on.value,
            "checks": list(self.checks),
        }


@dataclass(frozen=True)
class Check:
    """A function of a check family that emits the findings of `emits` (e.g. family "cuda": the TL3xx checks
    analysis/compiler/cuda/analyze.py runs over one compile)."""

    name: str
    run: Callable[..., Any]
    emits: tuple[str, ...] = ()


_RULES: dict[str, Rule] = {}
_CHECKS: dict[str, list[Check]] = {}
_generation = 0


def register(rule: Rule) -> Rule:
    if rule.code in _RULES and _RULES[rule.code] != rule:
        raise ValueError(f"rule code {rule.code} registered twice")
    unknown = set(rule.platforms) - set(PLATFORMS)
    if unknown:
        raise ValueError(f"rule {rule.code}: unknown platforms {sorted(unknown)}")
    if rule.lowers_to is not None and rule.lowers_to <= rule.severity:
        raise ValueError(f"rule {rule.code}: lowers_to must be less severe than {rule.severity.name.lower()}")
    global _generation
    if rule.code not in _RULES:
        _generation += 1
    _RULES[rule.code] = rule
    return rule


def generation() -> int:
    """Changes whenever a rule is added: tables derived from the registry rebuild when it does."""
    _load_all()
    return _generation


def register_check(family: str, *emits: Rule) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: run this function in check family `family`; it emits findings of `emits`.

    A rule module that defines its own check (one file per rule) is discovered like any other, so the family's
    engine runs the check without a list naming it."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        name = f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}"
        family_checks = _CHECKS.setdefault(family, [])
        if not any(c.name == name for c in family_checks):
            family_checks.append(Check(name, fn, tuple(r.code for r in emits)))
        return fn

    return decorate


def checks(family: str, *, package: str | None = None, discover: bool = True) -> list[Check]:
    """Every check of `family`. With `package` (the family's own package, `__package__` of its engine), every
    module of that package is imported first, so a rule module dropped there runs without a list naming it, and
    the checks run in the order of the rules they emit (TL301's check before TL304's). Without it, registration
    order; `discover=False` for a family that imports its own rule modules (triage, on the keystroke path)."""
    if package is not None:
        load_package(package)
        return sorted(_CHECKS.get(family, ()), key=lambda c: min(c.emits, default=""))
    if discover:
        _load_all()
    return list(_CHECKS.get(family, ()))


def load_package(package: str) -> None:
    """Import every module of one family package (once; again after `discover()`)."""
    if package in _loaded_packages:
        return
    import importlib
    import pkgutil

    module = importlib.import_module(package)
    for info in pkgutil.iter_modules(module.__path__, prefix=f"{package}."):
        importlib.import_module(info.name)
    _loaded_packages.add(package)


def get(code: str) -> Rule | None:
    rule = _RULES.get(code)
    if rule is None:  # discovery imports every level's modules: only when the code is not registered yet
        _load_all()
        rule = _RULES.get(code)
    return rule


def require(code: str) -> Rule:
    """The rule for `code`; a finding built for an unregistered code is a bug."""
    rule = get(code)
    if rule is None:
        raise KeyError(f"no rule registered for {code}")
    return rule


def registered() -> list[Rule]:
    """The rules registered so far, without importing the rest (level 1's are there once triage ran)."""
    return list(_RULES.values())


def all_rules() -> list[Rule]:
    _load_all()
    return sorted(_RULES.values(), key=lambda r: r.code)


def discover() -> None:
    """Import every module of the `analysis` package not imported yet (a rule module added since)."""
    global _loaded
    _loaded = False
    _loaded_packages.clear()
    _load_all()


def _load_all() -> None:
    # Rule modules register themselves on import. They are discovered, not listed: every module of the
    # `analysis` package is imported once (all are pure Python over text, cheap to import), so a new rule is
    # one new file.
    global _loaded
    if _loaded:
        return
    import importlib
    import pkgutil

    top = __package__.rpartition(".")[0]  # the `analysis` package (this module lives in analysis/core/)
    package = importlib.import_module(top)
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{top}."):
        importlib.import_module(info.name)
    _loaded = True


_loaded = False
_loaded_packages: set[str] = set()
