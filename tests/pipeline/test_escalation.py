"""analysis.escalation on real findings: triage run on the corpus, the compiler analysis run on the committed
compiler outputs of the same kernels (tests/fixtures/cuda, tests/fixtures/ascend)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tritonlens.analysis.compiler.dispatch import analyze
from tritonlens.analysis.core import rules
from tritonlens.analysis.core.escalation import apply_and_merge, confirmations, merge
from tritonlens.analysis.core.findings import Finding, Fix, Level, Severity, Span, TextEdit
from tritonlens.analysis.core.settings import Settings
from tritonlens.analysis.triage import triage

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "ir"))  # cuda_cases
sys.path.insert(0, str(ROOT / "tests" / "ascend"))  # ascend_cases

from ascend_cases import fixture_case  # noqa: E402
from cuda_cases import load_case, report_for  # noqa: E402


def cuda_findings(name: str) -> tuple[list[Finding], object]:
    """Triage of the corpus file (this kernel only) followed by the compiler's findings for it."""
    case = load_case(name)
    found = [f for f in triage(case.source, case.path).findings if f.kernel == case.kernel]
    return found + list(report_for(name).findings), case


def ascend_findings(name: str) -> tuple[list[Finding], dict]:
    case = fixture_case(name)
    req = case["request"]
    report = analyze(
        case["stages"],
        case["metadata"],
        case["resources"],
        req["target"],
        case["source"],
        req["kernel"],
        req["path"],
    )
    found = [f for f in triage(case["source"], req["path"]).findings if f.kernel == req["kernel"]]
    return found + list(report.findings), case


def at(findings: list[Finding], line: int) -> list[str]:
    return sorted(f.code for f in findings if f.span.line <= line <= f.span.end_line)


def ascend_line(case: dict, needle: str) -> int:
    return next(i for i, t in enumerate(case["source"].splitlines(), 1) if needle in t)


def test_table_pairs_name_registered_rules_of_a_lower_level() -> None:
    pairs = confirmations()
    assert len(pairs) >= 14  # every pair the rules declared before they moved next to the rules
    for entry in pairs:
        high, low = rules.get(entry.higher), rules.get(entry.lower)
        assert high is not None and low is not None, entry
        assert high.level > low.level, entry
        # a pair only makes sense where both rules can fire on one platform
        assert set(high.platforms) & set(low.platforms), entry


def test_loop_invariant_load_is_one_finding_with_the_triage_symptom_first() -> None:
    found, case = cuda_findings("rmsnorm_rows_naive")
    line = case.line("w = tl.load(w_ptr + cols)")
    assert at(found, line) == ["TL106", "TL314"]  # both levels fire on this line before merging
    triage_finding = next(f for f in found if f.code == "TL106")
    merged = merge(found)
    (f,) = [m for m in merged if m.span.line == line]
    assert f.code == "TL314" and f.level == Level.COMPILER
    assert f.data["confirms"] == ["TL106"]
    assert f.data["confirmed"][0]["message"] == triage_finding.message
    # symptom (AST) -> IR excerpt, in that order
    assert f.evidence[0].kind == "ast" and f.evidence[0].summary.startswith("TL106 (level 1)")
    assert f.evidence[0].excerpt == triage_finding.evidence[0].excerpt
    assert [e.kind for e in f.evidence[1:]] == [
        e.kind for e in next(x for x in found if x.code == "TL314").evidence
    ]
    # TTIR shows the un-hoisted load whatever the backend: the Ascend half of TL106 is confirmed too
    assert f.platforms == ("cuda", "ascend")
    assert len(merged) == len(found) - 1


def test_other_loop_or_repeated_kind_is_not_the_same_cause() -> None:
    found, case = cuda_findings("rmsnorm_rows_naive")
    line = case.line("w = tl.load(w_ptr + cols)")
    tl314 = next(f for f in found if f.code == "TL314" and f.span.line == line)
    for data in (
        {**tl314.data, "loop_line": tl314.data["loop_line"] + 1},
        {**tl314.data, "kind": "repeated"},
    ):
        moved = [replace(f, data=data) if f is tl314 else f for f in found]
        assert at(merge(moved), line) == ["TL106", "TL314"]


def test_multipass_softmax_merges_only_same_line_same_cause() -> None:
    found, case = cuda_findings("softmax_multipass")
    scale = case.line("scale = tl.load(scale_ptr)")
    cast = case.line(".to(tl.int64)")
    x_load = case.line("x = tl.load(row_x + cols, mask=cols < n_cols, other=0.0)")
    merged = merge(found)
    assert at(merged, scale) == ["TL314"]
    # the cast (TL113) and the int64 accesses (TL312) are on different lines: both stay, each where it points
    assert at(merged, cast) == ["TL113"]
    # TL117 is Ascend's int64 compare; TL312 is an NVIDIA finding about address math: not merged
    assert at(merged, x_load) == at(found, x_load) == ["TL117", "TL312"]
    # the row read three times is one TL108, on the first re-read, listing the later ones (issue 24)
    reread = case.line("den += tl.sum(tl.exp(x - m), axis=0)") - 1
    assert at(merged, reread) == ["TL108"]


def test_ieee_dot_folds_into_dot_on_fma() -> None:
    found, case = cuda_findings("matmul_fp32_ieee")
    line = case.line("acc += tl.dot(a, b, input_precision=")
    # Triage no longer claims fp32 for operands whose dtype it cannot see (docs/precision.md): only the
    # compile knows. When triage does fire (operands cast to fp32, or fp32 tensors at the launch), the
    # compiler's TL305 confirms it: pair them on the same line.
    assert at(found, line) == ["TL305"]
    tl305 = next(f for f in found if f.span.line == line)
    found = [*found, replace(tl305, code="TL111", level=Level.TRIAGE, evidence=(), data={})]
    merged = merge(found)
    (f,) = [m for m in merged if m.span.line == line]
    assert f.code == "TL305" and f.data["confirms"] == ["TL111"] and f.platforms == ("cuda",)
    assert any(e.stage == "ptx" for e in f.evidence)
    assert [m.code for m in merged if m.code == "TL308"]  # unrelated compiler finding untouched
    # a TL305 for another operand type (small tiles, integers) is not TL111's cause
    other = [replace(x, data={**x.data, "operand_type": "f16"}) if x.code == "TL305" else x for x in found]
    assert at(merge(other), line) == ["TL111", "TL305"]


def test_cuda_compiler_finding_does_not_absorb_an_ascend_symptom() -> None:
    found, case = cuda_findings("gather_elements")
    line = case.line("vals = tl.load(table_ptr + idx")
    # TL116 warns about Ascend's scalar gather loop; TL301 is NVIDIA's vectorization: different hardware
    assert at(merge(found), line) == at(found, line) == ["TL116", "TL301"]


def test_ascend_gather_folds_into_scalarized_access() -> None:
    found, case = ascend_findings("gather")
    line = ascend_line(case, "tl.load(src_ptr + idx")
    assert at(found, line) == ["TL116", "TL401"]
    merged = merge(found)
    (f,) = [m for m in merged if m.span.line == line]
    assert f.code == "TL401" and f.data["confirms"] == ["TL116"]
    assert f.evidence[0].kind == "ast" and f.evidence[1].stage == "ttadapter"
    assert "DiscreteMemAccess" in f.evidence[1].excerpt
    mask = ascend_line(case, "mask = offs < n")
    assert at(merged, mask) == ["TL402"]  # nothing to confirm there
    # a TL401 whose address is not affine for another reason (no loaded index) is not TL116's cause
    other = [replace(x, data={**x.data, "index_line": None}) if x.code == "TL401" else x for x in found]
    assert at(merge(other), line) == ["TL116", "TL401"]


def test_lower_fix_is_carried_when_the_higher_has_none() -> None:
    found, case = cuda_findings("rmsnorm_rows_naive")
    line = case.line("w = tl.load(w_ptr + cols)")
    fix = Fix("hoist the load", (TextEdit(Span(line, 0, line, 1), ""),))
    with_fix = [replace(f, fix=fix) if f.code == "TL106" else f for f in found]
    (f,) = [m for m in merge(with_fix) if m.span.line == line]
    assert f.code == "TL314" and f.fix == fix


def test_settings_apply_before_merging() -> None:
    found, case = cuda_findings("rmsnorm_rows_naive")
    line = case.line("w = tl.load(w_ptr + cols)")
    # ignoring the compiler's code leaves triage's symptom, not nothing
    assert at(apply_and_merge(Settings(ignore=("TL314",)), found), line) == ["TL106"]
    assert at(apply_and_merge(Settings(target="cuda"), found), line) == ["TL314"]
    # an Ascend-only view never sees the NVIDIA finding, so the symptom stays as triage reported it
    assert at(apply_and_merge(Settings(target="ascend"), found), line) == ["TL106"]
    # a severity override of the lower code still counts: the merged finding is at least as severe
    bumped = apply_and_merge(Settings(severity={"TL106": Severity.ERROR}), found)
    (f,) = [m for m in bumped if m.span.line == line]
    assert f.code == "TL314" and f.severity == Severity.ERROR


def test_merge_is_idempotent_and_keeps_order() -> None:
    found, _ = cuda_findings("softmax_multipass")
    once = merge(found)
    assert merge(once) == once
    kept = [f for f in found if f.code != "TL106"]
    assert [f.code for f in once] == [f.code for f in kept]


@pytest.mark.parametrize("name", ["softmax_naive", "add_strided", "layernorm_naive", "matmul_unaligned"])
def test_nothing_to_confirm_leaves_findings_unchanged(name: str) -> None:
    found, _ = cuda_findings(name)
    assert merge(found) == found
