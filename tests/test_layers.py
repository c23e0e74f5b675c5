"""Layers point one way: server -> analysis + runner client -> workers; the server never imports triton/torch."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _package_of(path: Path) -> list[str]:
    parts = ["tritonlens", *path.relative_to(ROOT).with_suffix("").parts]
    return parts[:-1]


def _imports(folder: str) -> dict[str, set[str]]:
    """Absolute module names each file imports; relative imports are resolved against the file's package."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / folder).rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if not node.level:
                    names.add(node.module or "")
                    continue
                package = _package_of(path)
                base = package[: len(package) - node.level + 1]
                if node.module:
                    names.add(".".join([*base, node.module]))
                else:
                    names.update(".".join([*base, a.name]) for a in node.names)
        found[str(path.relative_to(ROOT))] = names
    return found


def test_no_absolute_imports_of_the_distribution_inside_it():
    # Sibling folders are imported relatively, so the dependency graph is visible from the tree.
    for folder in ("server", "analysis", "ascend_runner"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "from tritonlens." not in text and "import tritonlens." not in text, path


def test_relative_imports_resolve_to_the_layers():
    server = _imports("server")
    assert "tritonlens.server.lsp.feature" in server["server/lsp/server.py"]
    assert any(n.startswith("tritonlens.analysis") for names in server.values() for n in names)


def test_analysis_depends_on_neither_server_nor_runner_nor_compilers():
    for path, names in _imports("analysis").items():
        bad = {
            n
            for n in names
            if n.split(".")[0] in ("triton", "torch")
            or n.startswith(("tritonlens.server", "tritonlens.ascend_runner"))
        }
        assert not bad, f"{path} imports {sorted(bad)}"


def test_server_uses_only_the_runner_client_and_protocol():
    # What the runner offers the server is read in one place (ascend_runner/client.py re-exports it).
    allowed = {"tritonlens.ascend_runner.client", "tritonlens.ascend_runner.protocol"}
    for path, names in _imports("server").items():
        runner = {n for n in names if n.startswith("tritonlens.ascend_runner")}
        assert runner <= allowed, f"{path} imports {sorted(runner - allowed)}"


def test_only_the_cli_imports_its_subcommands():
    # server/commands holds the CLI's subcommands; the language server and the engines never import them.
    for path, names in _imports("server").items():
        if path.startswith("server/commands/") or path == "server/cli.py":
            continue
        assert not {n for n in names if n.startswith("tritonlens.server.commands")}, path


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
        "tritonlens.server.lsp.server",
        "tritonlens.server.engine.diagnose",
        "tritonlens.server.features.compile",
        "tritonlens.server.features.escalation",
        "tritonlens.server.features.profile",
        "tritonlens.ascend_runner.client",
        "tritonlens.ascend_runner.remote_client",
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "from tritonlens.analysis.core import rules; rules.all_rules()\n"
        "from tritonlens.server.lsp.server import create_server; create_server()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('triton', 'torch')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_no_import_cycles_inside_the_distribution():
    # Lazy (function-level) imports count too: a cycle is a cycle for a reader, whenever it executes.
    graph: dict[str, set[str]] = {}
    for folder in ("server", "analysis", "ascend_runner"):
        for path, names in _imports(folder).items():
            module = ".".join(["tritonlens", *Path(path).with_suffix("").parts]).removesuffix(".__init__")
            graph[module] = {n for n in names if n.startswith("tritonlens.")}
    known = set(graph)

    def target(name: str) -> str | None:
        # `from pkg import mod` names a module; `from mod import func` names the module above it.
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    edges = {m: {t for n in names if (t := target(n)) and t != m} for m, names in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                cycles.append(stack[stack.index(n) :] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_the_runner_protocol_and_analysis_name_the_same_compile_targets():
    # analysis/core/targets.py reads target names for the server; the protocol validates jobs with its own table
    # (workers cannot import the package): both must list the same targets.
    from tritonlens.analysis.core import targets
    from tritonlens.ascend_runner import protocol

    assert tuple(protocol.CUDA_TARGETS) == targets.CUDA_TARGETS
    assert tuple(protocol.ASCEND_TARGETS) == targets.ASCEND_TARGETS
    assert all(targets.platform_of(t) == "cuda" for t in targets.CUDA_TARGETS)
    assert all(targets.platform_of(t) == "ascend" for t in targets.ASCEND_TARGETS)
    assert targets.compile_target_problem("both") and targets.compile_target_problem("sm_91")
    assert targets.choose_compile_target("auto", "ascend910b1", ("cuda",)) == "ascend910b1"
    assert targets.choose_compile_target(None, None, ("ascend",)) == targets.DEFAULT_ASCEND_TARGET
