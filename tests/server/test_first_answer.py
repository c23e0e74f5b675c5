"""What stands between didOpen and the first diagnostics: only level-1 work. The first publish of a level-1-only
file imports no later level's rule modules, and the workspace index neither reads a file that is open in the
editor nor triages while the editor waits (it pauses between functions)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from tritonlens.server.features.workspace_index import WorkspaceIndex
from tritonlens.server.lsp.analysis import index_file

FIRST_PUBLISH = """
import sys
from tritonlens.server.lsp.analysis import analyze_text
from tritonlens.server.lsp.convert import LineText, to_diagnostic
from tritonlens.analysis.core.escalation import apply_and_merge
from tritonlens.analysis.core.settings import Settings
text = open(sys.argv[1]).read()
a = analyze_text(text, sys.argv[1], 1)
found = apply_and_merge(Settings(), a.findings)
lines = LineText(text)
diags = [to_diagnostic(f, lines, "file:///k.py", 1) for f in found]
assert diags
later = sorted(m for m in sys.modules if m.startswith("tritonlens.analysis.compiler.cuda.analyze")
               or m.startswith("tritonlens.analysis.profile.rules"))
print(",".join(later))
"""

KERNEL = """import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, t_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for i in range(0, n, BLOCK):
        t = tl.load(t_ptr)
        x = tl.load(x_ptr + i + cols, mask=i + cols < n)
        tl.store(y_ptr + i + cols, x / t, mask=i + cols < n)
"""

def test_first_publish_imports_no_later_level_rules(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    out = subprocess.run([sys.executable, "-c", FIRST_PUBLISH, str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""  # e.g. compiler_cuda_rules: imported only when a later level reports


def test_index_leaves_open_files_to_the_editor_and_reads_them_when_closed(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    opened = {str(path)}
    index = WorkspaceIndex(index_file)
    index.is_open = lambda p: p in opened
    try:
        index.add_root(str(tmp_path))
        assert index.wait_scanned(10)
        assert index.get(str(path)) is None  # open: the editor's analysis stands for it
        opened.clear()
        index.closed(str(path))
        deadline = time.monotonic() + 10
        while index.get(str(path)) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert index.get(str(path)) is not None
    finally:
        index.stop()


def test_background_triage_pauses_between_functions_while_the_editor_waits() -> None:
    text = KERNEL + "".join(KERNEL.split("\n\n\n", 1)[1].replace("def scale", f"def scale{i}") for i in range(5))
    idle = threading.Event()  # the editor is busy
    calls: list[float] = []

    def between() -> None:
        calls.append(time.monotonic())
        idle.wait(5.0)

    worker = threading.Thread(target=index_file, args=(text, "/tmp/pause.py", between))
    worker.start()
    time.sleep(0.3)
    assert worker.is_alive() and len(calls) == 1  # paused at the first function
    idle.set()
    worker.join(10)
    assert not worker.is_alive() and len(calls) == 6


# What the server imports before it can answer `initialize` (issue 23): the CLI's `serve` path, the server with every
# feature, the warm-up triage. None of the engines of later work may be among them: each is imported by the request
# or run that needs it (and was 0.25-0.3 s of CPU at start).
SERVER_START = """
import sys
sys.argv = ["tritonlens", "serve"]
from tritonlens.server import cli
cli.build_parser(["serve"])
from tritonlens.server.lsp.server import create_server, prepare_process
create_server()
prepare_process()
print("\\n".join(sorted(sys.modules)))
"""

NOT_AT_START = (
    "tritonlens.server.engine.optimize",
    "tritonlens.server.engine.diagnose.run",
    "tritonlens.server.engine.profile",
    "tritonlens.server.engine.record.jobs",
    "tritonlens.server.charts",
    "tritonlens.server.commands.check",
    "tritonlens.ascend_runner.client",
    "tritonlens.analysis.profile",
    "tritonlens.analysis.compiler.cuda",
    "importlib.metadata",
    "torch",
    "triton",
)


def test_server_start_imports_no_engine_of_later_work() -> None:
    out = subprocess.run([sys.executable, "-c", SERVER_START], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    modules = out.stdout.split()
    assert "tritonlens.server.lsp.core" in modules  # the probe saw the server
    early = [m for m in modules if any(m == p or m.startswith(p + ".") for p in NOT_AT_START)]
    assert early == []


def test_the_lazily_imported_names_still_resolve() -> None:
    from tritonlens.server.charts import roofline_request
    from tritonlens.server.engine import diagnose
    from tritonlens.server.features import profile

    assert profile.ROOFLINE_REQUEST == roofline_request.ROOFLINE_REQUEST  # the feature's copy of the method name
    for name in diagnose.__all__:
        assert getattr(diagnose, name) is not None


def test_package_version_reads_the_installed_metadata() -> None:
    from importlib.metadata import version

    from tritonlens.server.cli import _dist_info_version, package_version

    assert package_version() == version("tritonlens")
    assert _dist_info_version("pygls") == version("pygls")  # the same reader on another distribution
    assert _dist_info_version("no-such-distribution-here") is None


def test_start_up_work_waits_for_the_first_answer(monkeypatch) -> None:
    import asyncio

    from tritonlens.server.lsp import core

    monkeypatch.setattr(core, "FIRST_ANSWER_WAIT_S", 0.2)

    async def scenario() -> list[str]:
        server = core.TritonLensServer("test")
        ran: list[str] = []
        server.after_first_answer(lambda: ran.append("a"))
        server.after_first_answer(lambda: ran.append("b"))
        await asyncio.sleep(0.05)
        ran.append("|")  # nothing ran yet: no analysis was published
        server._first_answer_out()  # what _analyze_once does after its publish
        server.after_first_answer(lambda: ran.append("c"))  # once out: at once
        await asyncio.sleep(0.3)  # the fallback timer fires too: it must not run anything twice
        return ran

    assert asyncio.run(scenario()) == ["|", "a", "b", "c"]


def test_start_up_work_runs_without_any_document_after_the_wait(monkeypatch) -> None:
    import asyncio

    from tritonlens.server.lsp import core

    monkeypatch.setattr(core, "FIRST_ANSWER_WAIT_S", 0.05)

    async def scenario() -> list[str]:
        server = core.TritonLensServer("test")
        ran: list[str] = []
        server.after_first_answer(lambda: ran.append("status"))
        await asyncio.sleep(0.3)
        return ran

    assert asyncio.run(scenario()) == ["status"]
