"""The editor's severity for a finding must be one `tritonlens rules` states for its rule (issue 14 item 18: TL101
was listed as a warning but shown as an error). Checks every triage finding on every kernel file in the repo."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from triage_helpers import run

from tritonlens.analysis.core import rules
from tritonlens.analysis.core.findings import Severity

ROOT = Path(__file__).resolve().parents[2]
SHAPED = '''
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src, dst, n, BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)
'''


def _corpus() -> list[str]:
    files = [p for d in ("examples", "bench", "tests/triage/data") for p in sorted((ROOT / d).rglob("*.py"))]
    return [SHAPED] + [p.read_text(encoding="utf-8") for p in files]


def test_no_finding_is_more_severe_than_its_rule_says():
    seen = 0
    for source in _corpus():
        for f in run(source):
            rule = rules.get(f.code)
            if rule is None:
                continue
            seen += 1
            assert f.severity >= rule.max_severity, (f.code, f.severity, rule.severity, f.message)
    assert seen > 0


def test_tl101_error_is_declared_and_listed_by_the_rules_command():
    errors = [f for f in run(SHAPED) if f.code == "TL101"]
    assert errors and errors[0].severity == Severity.ERROR
    out = subprocess.run([str(Path(sys.executable).with_name("tritonlens")), "rules"], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("TL101"))
    assert "warning, error when" in line
