"""Layers point one way: server -> analysis + runner client -> workers; the server never imports triton/torch."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imports(folder: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (ROOT / folder).rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
        found[str(path.relative_to(ROOT))] = names
    return found


def test_analysis_depends_on_neither_server_nor_runner_nor_compilers():
    for path, names in _imports("analysis").items():
        bad = {
            n
            for n in names
            if n.split(".")[0] in ("triton", "torch")
            or n.startswith(("tritonlens.server", "tritonlens.ascend_runner"))
        }
        assert not bad, f"{path} imports {sorted(bad)}"


def test_runner_client_does_not_import_the_server():
    for path, names in _imports("ascend_runner").items():
        assert not {n for n in names if n.startswith("tritonlens.server")}, path


def test_workers_are_standalone():
    # Workers run under each environment's own Python, where tritonlens is not installed.
    for path, names in _imports("ascend_runner/worker").items():
        assert not {n for n in names if n.startswith("tritonlens")}, path


def test_server_process_never_loads_triton_or_torch():
    modules = [
        "tritonlens.server.cli",
        "tritonlens.server.lsp",
        "tritonlens.server.pipeline",
        "tritonlens.server.pipeline_lsp",
        "tritonlens.server.profile_lsp",
        "tritonlens.ascend_runner.client",
        "tritonlens.ascend_runner.remote_client",
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "from tritonlens.analysis import rules; rules.all_rules()\n"
        "from tritonlens.server.lsp import create_server; create_server()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('triton', 'torch')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
