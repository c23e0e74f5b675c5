"""Fuzzing sources through parse, triage, specialization and the CLI's JSON output: mutated and half-typed
Triton code, random bytes, unicode line separators. Properties: no exception (rules run strict: a rule that
raises loses its finding, so it fails here), no step slower than HANG_S, findings serialise."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fuzz_profile import HANG_S, Tally, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from tritonlens.analysis.kernels import parse_module
from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.findings import specialization_findings
from tritonlens.analysis.triage import triage
from tritonlens.server.lsp.analysis import analyze_text
from tritonlens.server.source_files import UnreadableSource, decode_python_source

ROOT = Path(__file__).resolve().parents[2]
SEEDS = sorted([*(ROOT / "tests" / "corpus").glob("*.py"), *(ROOT / "examples").glob("*.py")])
SEED_TEXTS = [p.read_text(encoding="utf-8") for p in SEEDS]

# Fragments that make half-typed and hostile Triton code.
FRAGMENTS = [
    "@triton.jit\n",
    "def k(",
    "):\n",
    "    ",
    "tl.arange(0, ",
    "BLOCK",
    ": tl.constexpr",
    "[grid](",
    "(",
    ")",
    "[",
    "]",
    ":",
    ",",
    "=",
    "**",
    "<<",
    "*",
    "9" * 4300,
    "(((3**128)**128)**128)**128",
    "'x' * 10**9",
    "\u2028",
    "\u2029",
    "\x85",
    "\x0c",
    "\x0b",
    "\r",
    "\r\n",
    "\n",
    "\t",
    "\x00",
    "\ufeff",
    "😀",
    "é",
    "# tritonlens: k BLOCK=",
    "# -*- coding: latin-1 -*-\n",
    "tl.load(",
    "tl.store(",
    "mask=",
    "other=",
    "triton.Config({'BLOCK': 96}, num_warps=",
    "@triton.autotune(configs=[",
    "key=['N'])\n",
    "lambda meta: (",
    "tl.program_id(0)",
    "for i in range(",
    "while ",
    "if ",
    "else:\n",
    "return ",
    "import triton\n",
    "import triton.language as tl\n",
    "tl.dot(a, b)",
    "tl.sum(x, axis=0)",
    "None",
    "True",
    "1e309",
    "-0",
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEED_TEXTS))
    for _ in range(draw(st.integers(1, 8))):
        n = len(text)
        a = draw(st.integers(0, n))
        b = draw(st.integers(a, min(n, a + 200)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "duplicate", "truncate"]))
        piece = draw(st.sampled_from(FRAGMENTS) | st.text(max_size=12))
        if op == "insert":
            text = text[:a] + piece + text[a:]
        elif op == "delete":
            text = text[:a] + text[b:]
        elif op == "replace":
            text = text[:a] + piece + text[b:]
        elif op == "duplicate":
            text = text[:b] + text[a:b] + text[b:]
        else:
            text = text[:a]
    return text


def random_bytes_text() -> st.SearchStrategy[str]:
    def decode(data: bytes) -> str:
        try:
            return decode_python_source(data)[0]
        except UnreadableSource:
            return data.decode("latin-1")

    return st.binary(max_size=400).map(decode)


SOURCES = (
    mutated()
    | random_bytes_text()
    | st.text(max_size=300)
    | st.lists(st.sampled_from(FRAGMENTS)).map("".join)
)


TALLY = Tally("sources")


@pytest.fixture(scope="module", autouse=True)
def report():
    TALLY.start()
    yield
    data = TALLY.save()
    print(f"\nsource fuzz: {data}")  # shown with `pytest -s`


def timed(what: str, fn, *args):
    started = time.perf_counter()
    out = fn(*args)
    elapsed = time.perf_counter() - started
    TALLY.step(elapsed)
    assert elapsed < HANG_S, f"{what} took {elapsed:.1f} s"
    return out


@fuzz_settings(ci_examples=1000)
@given(source=SOURCES)
def test_sources_never_crash_or_hang(source: str):
    TALLY.counts["sources"] += 1
    try:
        check_source(source)
    except BaseException:
        TALLY.counts["sources_failed"] += 1
        raise
    TALLY.counts["sources_passed"] += 1


def check_source(source: str) -> None:
    module = timed("parse_module", parse_module, source)
    result = timed("triage", lambda s: triage(s, "fuzz.py", strict=True), source)
    json.dumps([f.to_dict() for f in result.findings])
    TALLY.counts["findings"] += len(result.findings)
    for kernel in list(module.kernels)[:3]:
        specs = timed("specializations", specializations, source, kernel.name)
        timed("specialization_findings", specialization_findings, source, kernel.name, specs)
    analysis = timed("analyze_text", analyze_text, source, "fuzz.py", 1)
    assert analysis.version == 1
