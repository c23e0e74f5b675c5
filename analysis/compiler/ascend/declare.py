"""What every TL4xx rule module shares: the check family the Ascend analysis runs (each rule is declared next to
the check that emits it, `@register_check(ASCEND_FAMILY, RULE)`) and the triton-ascend documents rules cite."""

from __future__ import annotations

ASCEND_FAMILY = "ascend"  # rules.checks family: the TL4xx checks run over one triton-ascend compile

_DOCS = "https://github.com/triton-lang/triton-ascend/blob/main/docs/en"
PROGRAMMING_GUIDE = f"{_DOCS}/programming_guide.md"
PERFORMANCE_GUIDE = f"{_DOCS}/migration_guide/performance_guidelines.md"
ARCHITECTURE = f"{_DOCS}/migration_guide/architecture_difference.md"
UB_OVERFLOW = f"{_DOCS}/debug_guide/ub_overflow.md"
