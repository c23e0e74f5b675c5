"""The collector pause of the server (server/lsp/collector.py): a cache's full collection asked for while the
collector is paused waits for `collect_if_due`, and a pause that ends before it began holds nothing."""

from __future__ import annotations

import gc

from tritonlens.analysis.state import lru
from tritonlens.server.lsp.collector import Pause, collect_if_due, collector_paused


def _cache() -> lru.LRU[int, bytes]:
    return lru.LRU(2, 100, lambda _key, value: len(value), collect_every=50)


def test_collection_asked_for_while_paused_runs_after_the_pause() -> None:
    lru.take_due_collection()
    runs: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            runs.append(1)

    gc.callbacks.append(count)
    try:
        cache = _cache()
        with collector_paused():
            assert not gc.isenabled()
            for key in range(4):
                cache.put(key, b"x" * 60)  # evicts 60 bytes each time past two entries
            assert not runs, "a full collection ran while the editor waited"
            assert not collect_if_due()  # still paused: the last pause to end collects
        assert gc.isenabled()
        assert collect_if_due() and runs
        assert not collect_if_due()  # once
    finally:
        gc.callbacks.remove(count)


def test_unpaused_cache_collects_at_once() -> None:
    lru.take_due_collection()
    cache = _cache()
    for key in range(4):
        cache.put(key, b"x" * 60)
    assert not lru.take_due_collection()


def test_pause_ended_before_it_began_keeps_the_collector_on() -> None:
    pause = Pause()
    pause.end()  # its waiter was cancelled before the worker thread started
    pause.begin()
    assert gc.isenabled()
    nested, outer = Pause(), Pause()
    outer.begin()
    nested.begin()
    outer.end()
    assert not gc.isenabled()
    nested.end()
    assert gc.isenabled()
