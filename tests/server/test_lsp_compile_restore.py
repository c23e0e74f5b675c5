"""Issue 23, item 5: compile results survive a window reload (cached per text). A save compiles examples/matmul.py
(TL305 confirms TL111); a fresh server (the window reloaded) shows TL305 as soon as the file opens, from the
compile cache, without a save and without compiling; a changed text is not restored (its compile is not cached)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_harness import open_doc, save_doc, session, wait_for, wait_published

from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment

MATMUL = Path(__file__).resolve().parents[2] / "examples" / "matmul.py"
CONFIG = {"debounceMs": 0, "irTarget": "sm_90", "target": "cuda", "escalation": {"onSave": True}}


def _has(rec, uri: str, code: str) -> bool:
    return any(str(d.code) == code for p in rec.for_uri(uri) for d in p.diagnostics)


async def test_a_reloaded_window_gets_the_cached_compile_results(tmp_path: Path, monkeypatch) -> None:
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(f"cuda runner environment missing: {exc}")
    monkeypatch.setenv("TRITONLENS_CACHE_DIR", str(tmp_path / "cache"))
    text = MATMUL.read_text()
    path = tmp_path / "matmul.py"
    path.write_text(text)
    async with session([tmp_path], config=CONFIG) as (client, rec):
        uri = open_doc(client, path, text)
        await wait_published(rec, uri, 1)
        assert not _has(rec, uri, "TL305")  # nothing cached yet: level 1 only until the save
        save_doc(client, uri)
        await wait_for(lambda: _has(rec, uri, "TL305"), 180, "TL305 after the save")

    cached = sorted(p.name for p in (tmp_path / "cache").rglob("*") if p.is_file())
    async with session([tmp_path], config=CONFIG) as (client, rec):  # the window reloaded: a new server
        uri = open_doc(client, path, text)
        await wait_for(lambda: _has(rec, uri, "TL305"), 30, "TL305 from the cache after the reopen, no save")
    assert sorted(p.name for p in (tmp_path / "cache").rglob("*") if p.is_file()) == cached  # nothing compiled

    changed = text.replace("        accumulator = tl.dot(", "        # edited: another kernel text\n        accumulator = tl.dot(", 1)
    assert changed != text
    async with session([tmp_path], config=CONFIG) as (client, rec):
        uri = open_doc(client, path, changed)
        await wait_published(rec, uri, 1)
        await asyncio.sleep(5)  # the restore looks up the cache and finds nothing
        assert not _has(rec, uri, "TL305")  # another text: not cached, so not shown before a save
