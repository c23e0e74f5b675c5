"""Features get the features they use through their constructor, typed (esbonio's model), never by looking them
up on the server; and the editor's optimize command restricts optimization to the kernel it names."""

from __future__ import annotations

import ast
import asyncio
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tritonlens.server.lsp.feature import Feature, Features

ROOT = Path(__file__).resolve().parents[2]


class Base(Feature):
    name = "base"


class Needs(Feature):
    name = "needs"

    def __init__(self, base: Base) -> None:
        super().__init__()
        self.base = base


class Optional_(Feature):
    name = "optional"

    def __init__(self, needs: Needs | None = None) -> None:
        super().__init__()
        self.needs = needs


def test_create_passes_each_feature_its_dependencies_and_registers_it():
    server = SimpleNamespace()
    features = Features()
    base = features.create(Base, server)
    needs = features.create(Needs, server)
    optional = features.create(Optional_, server)
    assert needs.base is base and optional.needs is needs
    assert needs.server is server and list(features) == [base, needs, optional]


def test_a_missing_dependency_is_an_error_unless_optional():
    features = Features()
    with pytest.raises(LookupError, match="Needs needs Base"):
        features.create(Needs, SimpleNamespace())
    assert features.create(Optional_, SimpleNamespace()).needs is None


def test_the_servers_features_are_wired_to_the_registered_ones():
    from tritonlens.server.features.compile import CompileFeature
    from tritonlens.server.features.escalation import EscalationFeature
    from tritonlens.server.features.findings import FindingsFeature
    from tritonlens.server.features.ir_view import IrViewFeature
    from tritonlens.server.features.optimize import OptimizeFeature
    from tritonlens.server.features.profile import ProfileFeature
    from tritonlens.server.features.record import RecordFeature
    from tritonlens.server.features.runner_status import RunnerStatusFeature
    from tritonlens.server.features.workspace import WorkspaceFeature
    from tritonlens.server.lsp.server import create_server

    server = create_server()
    try:
        get = server.features.get
        compile_ = get(CompileFeature)
        for cls in (EscalationFeature, IrViewFeature, RecordFeature, RunnerStatusFeature, ProfileFeature,
                    OptimizeFeature):
            assert get(cls).compile is compile_, cls
        assert get(ProfileFeature).status is get(RunnerStatusFeature)
        assert get(OptimizeFeature).service.profiler is get(ProfileFeature).service
        assert get(OptimizeFeature).service.compile is compile_.service
        assert get(FindingsFeature).workspace is get(WorkspaceFeature)
    finally:
        server.shutdown_resources()


def test_no_feature_looks_another_up_on_the_server():
    found = []
    for path in sorted((ROOT / "server").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                if ast.unparse(node.func.value).endswith("features"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "compile_service":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []


class _Progress:
    cancel_event = threading.Event()

    def report(self, message: str, pct: int | None) -> None:
        pass


def test_the_editors_kernel_argument_restricts_the_optimize_run(monkeypatch: pytest.MonkeyPatch):
    from tritonlens.server.engine.optimize import loop
    from tritonlens.server.engine.optimize.loop import OptimizeResult
    from tritonlens.server.features import optimize as feature

    asked: list[Any] = []

    def fake_optimize(text: str, path: str, runner: Any, options: Any, proposers: Any, **_: Any) -> Any:
        asked.append(options.kernel)
        return OptimizeResult(path, text, text, options.backend, options.target)

    # The feature imports the engine when a run starts (not at server start): the run reads it from there.
    monkeypatch.setattr(loop, "optimize_source", fake_optimize)
    kernels = [SimpleNamespace(name="scale_kernel"), SimpleNamespace(name="shift_kernel")]
    doc = SimpleNamespace(uri="file:///two.py", version=3, text="x = 1\n", path="/two.py",
                          analysis=SimpleNamespace(kernels=kernels))

    async def current(uri: str) -> Any:
        return doc

    config = SimpleNamespace(for_uri=lambda uri: SimpleNamespace(raw={}, extra={}))
    server = SimpleNamespace(current=current, config=config, show_once=lambda m: None, lenses_changed=lambda: None)
    compile_ = SimpleNamespace(runner=lambda uri: object(), target_for=lambda uri: "sm_90")
    service = feature.OptimizeService(server, compile_)  # type: ignore[arg-type]
    try:
        summary = asyncio.run(service.optimize(doc.uri, "shift_kernel", _Progress()))
        asyncio.run(service.optimize(doc.uri, None, _Progress()))
    finally:
        service.close()
    assert asked == ["shift_kernel", None]
    assert any("optimized shift_kernel only" in n for n in summary["notes"])
