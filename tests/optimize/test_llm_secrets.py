"""Secrets and model text (issue 21, deliverable 3), with a canary key: never in an LLM prompt, a log record or a
report; an LLM's title, reasoning and the verdicts quoting its code are literal text in hovers and reports."""

from __future__ import annotations

import io
import logging
import re
from pathlib import Path

from fake_openai import FakeOpenAI, Scripted

from tritonlens.analysis.kernels import parse_module
from tritonlens.analysis.rewrite.llm_prompt import (
    MARK_END,
    MARK_EVIDENCE,
    MARK_FILE,
    MARK_REASONING,
    MARK_TITLE,
)
from tritonlens.analysis.rewrite.model import Candidate, RecipeContext, Verdict
from tritonlens.server.engine.optimize.llm import make_proposer
from tritonlens.server.engine.optimize.loop import OptimizeResult
from tritonlens.server.engine.optimize.shapes import plan_shapes
from tritonlens.server.optimize_present import Offer, hover_record

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "optimize" / "kb_scale.py"
SOURCE = FIXTURE.read_text()
CANARY = "sk-canary-SECRET-55aa66bb77cc"
LINK = "[run me](command:tritonlens.optimize?%5B%22x%22%5D)"


def test_a_verdict_quoting_the_key_never_reaches_the_next_prompt(monkeypatch):
    monkeypatch.setenv("TL_CANARY_LLM_KEY", CANARY)
    code = SOURCE.replace("BLOCK = 64", "BLOCK = 128")
    text = f"{MARK_TITLE}\nt\n{MARK_EVIDENCE}\n\n{MARK_REASONING}\nr\n{MARK_FILE}\n```python\n{code}```\n{MARK_END}\n"
    with FakeOpenAI() as server:
        server.script = [Scripted(text), Scripted(text.replace("128", "256"))]
        p = make_proposer(server.base_url, "m", api_key_env="TL_CANARY_LLM_KEY")
        ctx = RecipeContext(source=SOURCE, path=str(FIXTURE), kernel="scale_kernel", module=parse_module(SOURCE))
        [first] = p.propose(ctx, [])
        # A verdict that quotes the key (say, what a candidate raised) is feedback for the next round.
        p.propose(ctx, [Verdict(first.id, False, f"RuntimeError: {CANARY}", stage="correctness")])
        sent = str([r["body"] for r in server.requests])
    assert "rejected at correctness" in sent and CANARY not in sent and "[redacted]" in sent


def test_log_records_are_redacted(monkeypatch):
    from tritonlens.server.trust.secrets import install_log_redaction

    monkeypatch.setenv("SOME_SERVICE_TOKEN", CANARY)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    install_log_redaction(handler)
    log = logging.getLogger("tritonlens.test.redaction")
    log.addHandler(handler)
    try:
        log.warning("candidate failed: %s", f"token={CANARY}")
    finally:
        log.removeHandler(handler)
    assert CANARY not in stream.getvalue() and "token=[redacted]" in stream.getvalue()


def test_model_text_is_literal_in_the_hover():
    cand = Candidate(source=SOURCE, origin="llm", producer="m", kernel="scale_kernel", title=f"faster {LINK}",
                     rationale="")
    verdict = Verdict(cand.id, True, f"verified correct; the candidate printed {LINK} <img src=x>",
                      details={"checks": [{"shape": "s", "seed": 0, "passed": False, "reason": LINK}]})
    result = OptimizeResult(str(FIXTURE), SOURCE, SOURCE, "interpret", "sm_90", shapes=plan_shapes(SOURCE))
    hover = hover_record(Offer(cand.id, cand, verdict, False, False), result)
    unescaped = re.sub(r"\\.", "", hover)  # drop every escaped character: what remains is live markup
    assert "command:" not in hover and "[run me]" not in unescaped and "<img" not in unescaped
    assert "run me" in hover  # the words stay readable
