"""Level 1, pattern triage: fast AST rules over one file, run by the language server on every edit.

`triage(source, path)` parses the file once (`analysis.kernels.parse_module`), builds a `KernelContext` for each
jit function (kernels and helpers) and runs every registered check on it. Results are unfiltered: callers apply
`Settings`. A file that does not parse gets a single TL001 finding; a file without kernels gets none.
Each finding's `kernel` is the jit function that contains it (a helper's own name for helper code).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from tritonlens.analysis.findings import Evidence, Finding, Level, Span
from tritonlens.analysis.kernels import ModuleInfo, parse_module

# The rule modules; importing one registers its rules and checks (listed in analysis/rules.py too).
RULE_MODULES = (
    "tritonlens.analysis.triage.blocks",
    "tritonlens.analysis.triage.parallelism",
    "tritonlens.analysis.triage.loops",
    "tritonlens.analysis.triage.memory",
    "tritonlens.analysis.triage.dot",
    "tritonlens.analysis.triage.grid",
    "tritonlens.analysis.triage.ascend",
    "tritonlens.analysis.triage.hygiene",
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TriageResult:
    findings: list[Finding] = field(default_factory=list)
    module: ModuleInfo = field(default_factory=lambda: ModuleInfo(source=""))


def triage(source: str, path: str = "<buffer>", *, strict: bool = False) -> TriageResult:
    """All level-1 findings for one file, sorted by position. `strict` re-raises a failing check (tests)."""
    from tritonlens.analysis.triage.base import KERNEL_CHECKS
    from tritonlens.analysis.triage.context import KernelContext

    _load_rule_modules()
    module = parse_module(source)
    if module.syntax_error is not None:
        return TriageResult([_syntax_finding(module)], module)
    findings: list[Finding] = []
    for function in module.functions:
        try:
            ctx = KernelContext(module=module, kernel=function, path=path)
        except Exception:
            if strict:
                raise
            log.exception("triage could not analyze %s in %s", function.name, path)
            continue
        for check in KERNEL_CHECKS:
            try:
                findings.extend(check(ctx))
            except Exception:  # a broken rule must never take the editor's diagnostics down
                if strict:
                    raise
                log.exception("triage check %s failed on %s in %s", check.__name__, function.name, path)
    unique: dict[tuple[object, ...], Finding] = {}
    for f in findings:
        unique.setdefault((f.code, f.span, f.kernel, f.message), f)
    ordered = sorted(unique.values(), key=lambda f: (f.span.line, f.span.col, f.code))
    return TriageResult(ordered, module)


def _syntax_finding(module: ModuleInfo) -> Finding:
    from tritonlens.analysis.front_rules import SYNTAX_ERROR

    error = module.syntax_error
    assert error is not None
    return Finding(
        code=SYNTAX_ERROR.code,
        message=f"syntax error: {error.message}",
        span=Span(error.line, error.col, error.end_line, error.end_col),
        severity=SYNTAX_ERROR.severity,
        level=Level.TRIAGE,
        kernel=None,
        platforms=SYNTAX_ERROR.platforms,
        evidence=(Evidence(kind="ast", summary="Python parser error", excerpt=error.message),),
    )


def _load_rule_modules() -> None:
    import importlib

    for name in RULE_MODULES:
        importlib.import_module(name)


__all__ = ["TriageResult", "triage", "RULE_MODULES"]
