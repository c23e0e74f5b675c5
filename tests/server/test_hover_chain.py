"""Hover text of a merged finding (no runner needed): real triage on the corpus plus the compiler analysis of
its committed sm_90 output, merged by analysis.escalation, rendered by server.hover_markdown."""

from __future__ import annotations

import sys
from pathlib import Path

from tritonlens.analysis.core.escalation import merge
from tritonlens.analysis.triage import triage
from tritonlens.server.features.hover_markdown import finding_markdown

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "ir"))  # cuda_cases

from cuda_cases import load_case, report_for  # noqa: E402


def test_hover_shows_what_was_confirmed_and_the_chain_in_order() -> None:
    case = load_case("rmsnorm_rows_naive")
    line = case.line("w = tl.load(w_ptr + cols)")
    found = [f for f in triage(case.source, case.path).findings if f.kernel == case.kernel]
    found += report_for("rmsnorm_rows_naive").findings
    (merged,) = [f for f in merge(found) if f.span.line == line]
    md = finding_markdown(merged)
    head, chain = md.split("**Evidence chain**", 1)
    assert head.startswith("**TL314** `redundant-global-load`")
    assert "**Confirms**" in head and "**TL106** `loop-invariant-load`, level 1 (triage)" in head
    # symptom (the triage AST excerpt), then the TTIR excerpt, then the rewrite
    assert chain.index("*ast · triage*: TL106 (level 1)") < chain.index("*ir · ttir*")
    assert "tl.load(w_ptr + cols)" in chain.split("*ir · ttir*")[0]
    assert "tt.load" in chain
    assert chain.index("**Rewrite:** move the load above the loop") > chain.index("*ir · ttir*")


def test_unmerged_finding_keeps_the_plain_evidence_heading() -> None:
    (finding,) = [f for f in report_for("scale_precise").findings if f.code == "TL313"]
    md = finding_markdown(finding)
    assert "**Evidence**" in md and "**Confirms**" not in md and "**Evidence chain**" not in md
    assert "**Rewrite:**" in md
