"""Issue 14 items 1 and 7 in the server: one document's analysis never starves another's, no stale publish."""

from __future__ import annotations

import asyncio
import threading

import pytest
from inprocess import edit_text, kernels_source, make_server, open_text

import tritonlens.server.lsp.core as lsp_server


async def test_heavy_documents_do_not_starve_a_light_one(monkeypatch: pytest.MonkeyPatch):
    """Three documents whose analysis never ends until released; a fourth is analysed meanwhile."""
    release = threading.Event()
    running: dict[str, int] = {}
    most: dict[str, int] = {}
    lock = threading.Lock()
    real = lsp_server.analyze_text_quickly

    def analyze(text: str, path: str, version: int):
        with lock:
            running[path] = running.get(path, 0) + 1
            most[path] = max(most.get(path, 0), running[path])
        try:
            if "heavy" in path:
                release.wait(30)
            return real(text, path, version)
        finally:
            with lock:
                running[path] -= 1

    monkeypatch.setattr(lsp_server, "analyze_text_quickly", analyze)
    server, published = make_server()
    try:
        source = kernels_source(2)
        for i in range(3):
            open_text(server, f"file:///tmp/heavy_{i}.py", source)
        await asyncio.sleep(0.05)
        for version in range(2, 8):  # typing in a heavy document must not take more lanes
            edit_text(server, "file:///tmp/heavy_0.py", version, source + f"# {version}\n")
            server.save("file:///tmp/heavy_0.py")
            await asyncio.sleep(0.01)
        open_text(server, "file:///tmp/light.py", source)
        doc = await asyncio.wait_for(server.current("file:///tmp/light.py"), 20)
        assert doc is not None and doc.current
        assert any(p.uri.endswith("light.py") for p in published)
        assert most.get("/tmp/heavy_0.py") == 1  # one analysis of a document at a time
    finally:
        release.set()
    heavy = await asyncio.wait_for(server.current("file:///tmp/heavy_0.py"), 20)
    assert heavy is not None and heavy.current and heavy.analysis.version == 7
    versions = [p.version for p in published if p.uri.endswith("heavy_0.py")]
    assert versions == [7]  # the versions typed past were never published
    server.shutdown_resources()


async def test_configuration_change_within_the_debounce_publishes_nothing_stale():
    """didChange then didChangeConfiguration before the debounce ends: only the new version is published."""
    server, published = make_server()
    uri = "file:///tmp/stale.py"
    source = kernels_source(3)
    open_text(server, uri, source)
    doc = await asyncio.wait_for(server.current(uri), 20)
    assert doc is not None
    published.clear()
    edit_text(server, uri, 2, "\n\n" + source)  # moves every finding two lines down
    # A pushed configuration that changes what is shown, inside the debounce.
    await server.refresh_config(pushed={"tritonlens": {"ignore": ["TL0"]}})
    assert all(p.version != 1 for p in published), [p.version for p in published]
    doc = await asyncio.wait_for(server.current(uri), 20)
    assert doc is not None and doc.analysis.version == 2
    assert [p.version for p in published] == [2]
    server.shutdown_resources()
