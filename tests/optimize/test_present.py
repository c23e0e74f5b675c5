"""What the editor shows for verified results: titles state what was measured (and nothing under interpret),
LLM-written rewrites are tagged, and edits touch only the lines that differ."""

from __future__ import annotations

from tritonlens.analysis.rewrite.model import Candidate, Verdict
from tritonlens.server.engine.optimize.loop import OptimizeResult, Step
from tritonlens.server.engine.optimize.report import summary_markdown
from tritonlens.server.features.optimize_present import action_title, line_edits, offers

BEFORE = "a\nb\nc\nd\n"


def cand(source: str, origin: str = "recipe") -> Candidate:
    return Candidate(source, origin, "p", "k", "bigger block", "why", ("TL127",), 1)


def timed(speedup: float | None, faster: bool) -> Verdict:
    details = {"faster": faster, "device": "NVIDIA H200", "timing_meaningful": True}
    return Verdict("x", True, "ok", speedup=speedup, spread=0.02, max_error=2e-6, details=details)


def test_titles_state_measurements_or_no_claim():
    result = OptimizeResult("f.py", BEFORE, BEFORE, "cuda", "sm_90")
    result.offered = [Step(cand("a\nB\nc\nd\n"), timed(3.1, True), 1), Step(cand("x\n"), timed(1.01, False), 1)]
    (offer,) = offers(result)  # the one inside the noise is not offered on a timed backend
    assert action_title(offer, "4096x8192") == (
        "Apply verified rewrite: 3.1x faster on NVIDIA H200 at 4096x8192, max error 2e-06 (bigger block)"
    )
    interp = OptimizeResult("f.py", BEFORE, BEFORE, "interpret", "sm_90")
    verdict = Verdict("x", True, "ok", max_error=1e-5, details={"faster": False})
    interp.offered = [Step(cand("a\n", origin="llm"), verdict, 1)]
    (offer,) = offers(interp)
    title = action_title(offer, "4096")
    assert title.startswith("[LLM] Apply verified-correct rewrite (not timed: no speed claim)")
    assert "faster" not in title


def test_later_round_steps_are_not_offered_against_the_buffer():
    result = OptimizeResult("f.py", BEFORE, "z\n", "cuda", "sm_90")
    result.applied = [Step(cand("y\n"), timed(2.0, True), 1), Step(cand("z\n"), timed(1.5, True), 2)]
    result.overall = timed(3.0, True)
    ids = [(o.whole, o.candidate.source) for o in offers(result)]
    assert ids == [(True, "z\n"), (False, "y\n")]  # the chain (measured vs the original) and round 1 only


def test_line_edits_touch_only_changed_lines():
    assert line_edits(BEFORE, "a\nB\nc\nd\ne\n") == [(1, 2, "B\n"), (4, 4, "e\n")]
    assert line_edits(BEFORE, BEFORE) == []


def test_summary_geomean_counts_kept_drafts_as_one():
    files = [
        {"path": "a.py", "speedup": 4.0, "spread": 0.01, "overall": {"accepted": True}, "applied": [1],
         "rejected": [], "timing_meaningful": True, "initial_ms": 2.0, "final_ms": 0.5, "offered": []},
        {"path": "b.py", "speedup": None, "spread": None, "overall": None, "applied": [], "rejected": [1, 2],
         "timing_meaningful": True, "initial_ms": None, "final_ms": None, "offered": [1]},
    ]
    text = summary_markdown(files)
    assert "Geometric mean over 2 file(s): 2.00x" in text and "kept (1.00x)" in text
