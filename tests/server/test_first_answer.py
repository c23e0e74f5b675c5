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
