"""In-process tests of the server's building blocks: positions, settings, per-version state, the disk index."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from lsprotocol import types

from tritonlens.analysis.core.findings import Finding, Fix, Level, Severity, Span, TextEdit
from tritonlens.server.features.hover_markdown import finding_markdown
from tritonlens.server.features.workspace_index import IndexedFile, IndexedKernel, WorkspaceIndex
from tritonlens.server.lsp.config import DEFAULT_DEBOUNCE_MS, ConfigStore, parse_config
from tritonlens.server.lsp.convert import LineText, plain_text, to_diagnostic
from tritonlens.server.lsp.documents import Analysis, DocState, finding_key, kernel_hashes


# --- positions ----------------------------------------------------------------------------------------------
def test_utf16_columns_count_surrogate_pairs():
    text = "x = '\U0001f600' + y\nz"
    lines = LineText(text)
    col_y = text.split("\n")[0].index("y")  # character column
    pos = lines.to_lsp(1, col_y)
    assert pos == types.Position(0, col_y + 1)  # the emoji is two UTF-16 code units
    assert lines.from_lsp(pos) == (1, col_y)
    utf32 = LineText(text, types.PositionEncodingKind.Utf32)
    assert utf32.to_lsp(1, col_y) == types.Position(0, col_y)


def test_positions_clamp_past_the_end():
    lines = LineText("ab\ncd")
    assert lines.to_lsp(9, 0) == types.Position(1, 2)
    assert lines.from_lsp(types.Position(0, 40)) == (1, 2)


def test_diagnostic_carries_code_source_and_data():
    f = Finding("TL001", "syntax error: x", Span(2, 1, 2, 3), Severity.ERROR, fix=None)
    d = to_diagnostic(f, LineText("a\nbcd\n"), "file:///k.py", 7)
    assert (d.code, d.source, d.severity) == ("TL001", "tritonlens", types.DiagnosticSeverity.Error)
    assert d.range == types.Range(types.Position(1, 1), types.Position(1, 3))
    assert d.data["version"] == 7 and d.data["key"] == finding_key(f)


def test_plain_surfaces_drop_markdown_but_keep_the_words():
    # Problems, quick-fix titles and the Kernels view show text verbatim: no literal backticks or link syntax.
    assert plain_text("`tl.load` of `x_ptr + offs` lacks a `mask=`") == "tl.load of x_ptr + offs lacks a mask="
    assert plain_text("see [TL101](https://x/y) and **why**") == "see TL101 and why"
    assert plain_text("`` a`b ``, 2*3*4 stays") == "a`b, 2*3*4 stays"
    f = Finding("TL101", "`tl.load` without `mask`", Span(1, 0, 1, 4), Severity.WARNING)
    assert to_diagnostic(f, LineText("x = 1\n"), "file:///k.py", 1).message == "tl.load without mask"


def test_hover_markdown_has_rule_evidence_and_gain():
    from tritonlens.analysis.core.findings import Evidence

    f = Finding(
        "TL001",
        "syntax error: bad",
        Span(1, 0, 1, 1),
        Severity.ERROR,
        evidence=(Evidence(kind="ast", summary="parser stopped", excerpt="def f(:"),),
        estimated_gain="none",
    )
    md = finding_markdown(f)
    assert "**TL001**" in md and "parser stopped" in md and "def f(:" in md
    assert "**Estimated gain:** none" in md
    assert "The Python parser stopped here" in md  # the rule's rationale


# --- configuration ------------------------------------------------------------------------------------------
def test_parse_config_defaults_and_values():
    cfg, problems = parse_config(None)
    assert problems == [] and cfg.debounce_ms == DEFAULT_DEBOUNCE_MS and cfg.settings.target == "auto"
    cfg, problems = parse_config(
        {
            "target": "cuda",
            "ignore": ["tl1"],
            "severity": {"TL001": "hint"},
            "debounceMs": 20,
            "llm": {"model": "m"},
        }
    )
    assert problems == []
    assert cfg.settings.platforms == ("cuda",) and cfg.settings.ignore == ("TL1",)
    assert cfg.settings.severity["TL001"] == Severity.HINT
    assert cfg.debounce_ms == 20 and cfg.extra == {"llm": {"model": "m"}}


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ({"target": "tpu"}, "unknown target"),
        ({"debounceMs": "fast"}, "debounceMs"),
        ({"debounceMs": -1}, "debounceMs"),
        ({"severity": {"TL001": "loud"}}, "unknown severity"),
        ({"runners": [1]}, "runners must be an object"),
        ("yes", "must be an object"),
    ],
)
def test_parse_config_bad_values_fall_back_with_a_message(raw, fragment):
    cfg, problems = parse_config(raw)
    assert any(fragment in p for p in problems), problems
    assert cfg.debounce_ms >= 0


def test_config_store_longest_folder_prefix():
    store = ConfigStore()
    a, _ = parse_config({"ignore": ["TL1"]})
    ab, _ = parse_config({"ignore": ["TL2"]})
    store.replace(parse_config({})[0], {"file:///w/a": a, "file:///w/a/b/": ab})
    assert store.for_uri("file:///w/a/k.py") is a
    assert store.for_uri("file:///w/a/b/k.py") is ab
    assert store.for_uri("file:///w/ab/k.py") is store.global_config  # not a path prefix


# --- per-version document state -----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Kernel:
    name: str
    span: Span
    name_span: Span


SOURCE = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n"


def _analysis(text: str, version: int, line: int, syntax_error: bool = False) -> Analysis:
    kernels = (
        () if syntax_error else (_Kernel("k", Span(line, 0, line + 2, 8), Span(line + 1, 4, line + 1, 5)),)
    )
    return Analysis(version, (), kernels, syntax_error, kernel_hashes(text, kernels))


def _ir_finding(line: int) -> Finding:
    edit = TextEdit(Span(line, 4, line, 8), "return")
    return Finding(
        "TL301",
        "spills",
        Span(line, 4, line, 8),
        Severity.WARNING,
        Level.IR,
        kernel="k",
        fix=Fix("t", (edit,)),
    )


def test_stale_triage_result_is_dropped():
    doc = DocState("file:///k.py", "/k.py", version=3)
    assert not doc.set_analysis(_analysis(SOURCE, 2, 3), SOURCE)
    assert doc.analysis is None
    assert doc.set_analysis(_analysis(SOURCE, 3, 3), SOURCE) and doc.current


def test_layer_findings_follow_kernel_and_expire_when_it_changes():
    doc = DocState("file:///k.py", "/k.py", version=1)
    doc.set_analysis(_analysis(SOURCE, 1, 3), SOURCE)
    assert not doc.add_layer(0, "k", Level.IR, [_ir_finding(5)])  # computed from an older version
    assert doc.add_layer(1, "k", Level.IR, [_ir_finding(5)])
    assert [f.span.line for f in doc.findings()] == [5]

    moved = "# a comment\n" + SOURCE  # kernel unchanged, one line lower
    doc.version = 2
    doc.set_analysis(_analysis(moved, 2, 4), moved)
    (shifted,) = doc.findings()
    assert shifted.span.line == 6 and shifted.fix is not None and shifted.fix.edits[0].span.line == 6

    broken = moved + "def (:\n"
    doc.version = 3
    doc.set_analysis(_analysis(broken, 3, 4, syntax_error=True), broken)
    assert doc.findings() == [] and doc.layers  # hidden while the file does not parse, not forgotten

    edited = moved.replace("pass", "return")
    doc.version = 4
    doc.set_analysis(_analysis(edited, 4, 4), edited)
    assert doc.findings() == [] and not doc.layers  # the kernel's own text changed


# --- workspace index ----------------------------------------------------------------------------------------
def _toy_analyzer(text: str, path: str) -> IndexedFile:
    """Test-only stand-in for triage: any `def` right after `@triton.jit` is a kernel."""
    lines = text.splitlines()
    kernels = [
        IndexedKernel(lines[i + 1].split("def ")[1].split("(")[0], i + 2, i + 1, i + 2)
        for i, line in enumerate(lines[:-1])
        if line.strip() == "@triton.jit" and lines[i + 1].startswith("def ")
    ]
    return IndexedFile(path, tuple(kernels), ())


def _kernel(name: str) -> str:
    return f"import triton\n\n@triton.jit\ndef {name}(x):\n    pass\n"


def _names(index: WorkspaceIndex) -> set[str]:
    return {k.name for f in index.files() for k in f.kernels}


def _until(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_index_scans_skips_and_follows_disk(tmp_path: Path):
    (tmp_path / "a.py").write_text(_kernel("ka"))
    for skipped in (".git", ".venv", "node_modules", ".hidden"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "x.py").write_text(_kernel(f"k_{skipped.strip('.')}"))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text(_kernel("kb"))
    (tmp_path / "huge.py").write_text(_kernel("khuge") + "#" * 1_100_000)
    (tmp_path / "plain.py").write_text("print('no kernels')\n")

    index = WorkspaceIndex(_toy_analyzer)
    try:
        index.add_root(str(tmp_path))
        assert index.wait_scanned(10)
        assert _names(index) == {"ka", "kb"}

        (tmp_path / "c.py").write_text(_kernel("kc"))  # created
        assert _until(lambda: "kc" in _names(index)), _names(index)
        (tmp_path / "a.py").write_text(_kernel("ka2"))  # modified
        assert _until(lambda: "ka2" in _names(index) and "ka" not in _names(index)), _names(index)
        os.rename(tmp_path / "c.py", tmp_path / "d.py")  # moved
        assert _until(
            lambda: (
                index.get(str(tmp_path / "d.py")) is not None and index.get(str(tmp_path / "c.py")) is None
            )
        )
        (tmp_path / "d.py").unlink()  # deleted
        assert _until(lambda: "kc" not in _names(index)), _names(index)
        shutil.rmtree(tmp_path / "pkg")  # folder deleted
        assert _until(lambda: "kb" not in _names(index)), _names(index)

        index.remove_root(str(tmp_path))
        assert _names(index) == set()
    finally:
        index.stop()


def test_editor_analysis_pauses_gc_only_while_it_runs():
    import gc

    from tritonlens.server.lsp.analysis import analyze_text_quickly

    assert gc.isenabled()
    broken = analyze_text_quickly("def f(:\n", "broken.py", 4)
    assert gc.isenabled()
    assert broken.version == 4 and broken.syntax_error
    assert [f.code for f in broken.findings] == ["TL001"]


def test_a_bad_host_line_keeps_the_kernels_diagnostics_and_the_later_levels_waiting():
    # a half-typed import above the kernels: level 1 still checks them (TL001 says the line was left out), and the
    # document still counts as not parsing, so levels 2-4 wait for a file that parses
    from tritonlens.server.lsp.analysis import analyze_text_quickly

    kernel = ("import triton\nimport triton.language as tl\n\n@triton.jit\ndef a(p, BLOCK: tl.constexpr):\n"
              "    offs = tl.arange(0, BLOCK)\n    tl.store(p + offs, tl.load(p + offs).to(tl.float64))\n")
    typed = analyze_text_quickly("from my-pkg import\n" + kernel, "typo.py", 5)
    assert typed.syntax_error and [f.code for f in typed.findings] == ["TL001", "TL122"]
    assert "left out" in typed.findings[0].message
