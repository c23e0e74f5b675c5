"""Every cache an analysis consults belongs to a session object (analysis/state/session.py): two sessions share no
cache state, the language server and the command line each create one, and nothing is cached at module level."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tritonlens.analysis.kernels import parse_module
from tritonlens.analysis.rewrite.registry import recipes_for
from tritonlens.analysis.state.session import Session, current
from tritonlens.analysis.triage import triage
from tritonlens.server.engine.diagnose import compile as diagnose_compile
from tritonlens.server.engine.diagnose.result import VariantResult
from tritonlens.server.engine.record.launch_store import project_relative
from tritonlens.server.lsp.documents import DocState
from tritonlens.server.lsp.views import kernel_findings_of, lines_for

ROOT = Path(__file__).resolve().parents[2]

SOURCE = '''import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x + 1)


def add(x, y):
    add_kernel[(x.numel() // 100,)](x, y, x.numel(), BLOCK=100)
'''


def _fill(session: Session, text: str = SOURCE) -> Any:
    with session.active():
        triage(text, "f.py")
        triage(text + "\n", "f.py")  # a second version: its chunks are known, so they are cached
        return parse_module(text)


def _sizes(session: Session) -> dict[str, int]:
    return {
        "parsed": len(session.parsed),
        "chunks": len(session.chunks),
        "triage": len(session.triage),
    }


def test_two_sessions_do_not_share_the_analysis_caches():
    first, second = Session(), Session()
    module = _fill(first)
    filled = _sizes(first)
    assert all(filled.values()), filled  # every analysis cache was used by the first session
    assert _sizes(second) == dict.fromkeys(filled, 0)  # and none of it is seen by the second
    with second.active():
        again = parse_module(SOURCE)
    assert again is not module  # parsed anew in the second session
    with first.active():
        assert parse_module(SOURCE) is module  # the first one's memo still holds it
    _fill(second)
    assert _sizes(second) == filled and _sizes(first) == filled
    # Node facts and call indexes live on a session's own trees (issue 21: a weak-keyed table kept every tree
    # alive), so two sessions' parses never share them either.
    with second.active():
        other = parse_module(SOURCE)
    assert other.tree is not module.tree


def test_the_session_bounds_trees_and_findings_by_bytes():
    session = Session()
    assert session.parsed.budget and session.triage.budget and session.reports.budget
    with session.active():
        big = SOURCE + "\n" + "# " + "x" * 200_000 + "\n"
        parse_module(big)
        parse_module(SOURCE)
    held = session.parsed.bytes
    assert 0 < held <= max(session.parsed.budget, 160 * len(SOURCE))


def test_each_session_discovers_its_own_recipe_registry():
    first, second = Session(), Session()
    with first.active():
        found = recipes_for({"TL101", "TL102", "TL103"})
    assert first.recipes and second.recipes is None
    with second.active():
        assert [r.name for r in recipes_for({"TL101", "TL102", "TL103"})] == [r.name for r in found]
    assert second.recipes is not first.recipes


def test_compile_reports_are_kept_per_session(monkeypatch: pytest.MonkeyPatch):
    analyses: list[str] = []

    def analyze(stages: dict, metadata: dict, resources: dict, target: str, source: str, kernel: str,
                path: str) -> Any:
        analyses.append(kernel)
        return SimpleNamespace(findings=[], summary={"n": len(analyses)}, line_maps={})

    from tritonlens.analysis.compiler import dispatch

    monkeypatch.setattr(dispatch, "analyze", analyze)
    spec = SimpleNamespace(key=lambda: ("k", 1))

    def variant() -> VariantResult:
        return VariantResult(specialization=spec, ok=True, cached=True, compiler="triton 3.6.0")  # type: ignore[arg-type]

    first, second = Session(), Session()
    with first.active():
        diagnose_compile.analyze_output(variant(), "sm_90", SOURCE, "add_kernel", "f.py")
        diagnose_compile.analyze_output(variant(), "sm_90", SOURCE, "add_kernel", "f.py")  # a warm re-analysis
    assert len(analyses) == 1 and len(first.reports) == 1
    with second.active():
        diagnose_compile.analyze_output(variant(), "sm_90", SOURCE, "add_kernel", "f.py")
    assert len(analyses) == 2 and len(second.reports) == 1  # the second session had no report to reuse


def test_line_tables_and_kernel_findings_belong_to_the_servers_session():
    doc = DocState(uri="file:///f.py", path="/f.py", version=1, text=SOURCE)
    with Session().active():
        doc.analysis = SimpleNamespace(kernels=parse_module(SOURCE).kernels)  # type: ignore[assignment]
    visible: list[Any] = []

    def server() -> Any:
        return SimpleNamespace(session=Session(), workspace=SimpleNamespace(position_encoding="utf-16"),
                               visible_findings=lambda d: visible)

    one, two = server(), server()
    table = lines_for(one, doc)
    assert lines_for(one, doc) is table and len(one.session.line_tables) == 1
    assert lines_for(two, doc) is not table and len(two.session.line_tables) == 1
    kernel = doc.analysis.kernels[0]
    kernel_findings_of(one, doc, kernel)
    assert len(one.session.kernel_findings) == 1 and len(two.session.kernel_findings) == 0


def test_workspace_roots_are_remembered_per_session(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    first, second = Session(), Session()
    with first.active():
        assert project_relative(str(tmp_path / "pkg" / "k.py")) == str(Path("pkg") / "k.py")
    assert len(first.workspace_roots) == 1 and len(second.workspace_roots) == 0


def test_the_language_server_creates_and_installs_its_own_session():
    from tritonlens.server.lsp.server import create_server

    outer = Session()
    with outer.active():
        one, two = create_server(), create_server()
        assert one.session is not two.session and current() is two.session  # the newest server is in force


def test_the_command_line_runs_in_a_session_of_its_own(tmp_path: Path):
    from tritonlens.server.cli import main

    path = tmp_path / "k.py"
    path.write_text(SOURCE)
    outer = Session()
    with outer.active():
        main(["check", str(path)])  # level 1 of the file: parses and triages it
        assert current() is outer  # restored after the run
    assert _sizes(outer) == dict.fromkeys(_sizes(outer), 0)  # the run's parses went to its own session


def _literal(node: ast.expr) -> bool:
    """A constant table (a literal), not state."""
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def test_no_module_keeps_a_cache_of_its_own():
    # The caches the session took over must not come back as module-level state: no functools cache decorators,
    # no module-level OrderedDict/WeakKeyDictionary/dict cache in analysis/ and server/ (constant tables aside).
    problems = []
    for folder in ("analysis", "server"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for d in node.decorator_list:
                        text = ast.unparse(d)
                        if "lru_cache" in text or text in ("cache", "functools.cache"):
                            problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: @{text}")
            for node in tree.body:
                value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
                if value is None:
                    continue
                text = ast.unparse(value)
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n.id.upper() for n in targets if isinstance(n, ast.Name)]
                named_cache = any(w in n for n in names for w in ("CACHE", "MEMO", "REPORTS", "TABLES", "RECIPES"))
                if any(k in text for k in ("OrderedDict(", "WeakKeyDictionary(", "WeakValueDictionary(")) or (
                    named_cache and not _literal(value)
                ):
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text[:60]}")
    assert problems == []
