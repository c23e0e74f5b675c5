"""The one LRU every session cache is built from (analysis/state/lru.py), and the segmented LRU of the chunk cache."""

from __future__ import annotations

import threading

import pytest

from tritonlens.analysis.state.lru import LRU, MISSING
from tritonlens.analysis.state.session import SegmentedLRU


def test_an_insert_past_the_size_drops_the_least_recent_and_says_which():
    lru: LRU[str, int] = LRU(2)
    assert lru.put("a", 1) == [] and lru.put("b", 2) == []
    assert lru.get("a") == 1  # a is now the most recent
    assert lru.put("c", 3) == [("b", 2)]
    assert lru.keys() == ["a", "c"] and len(lru) == 2
    assert lru.get("b") is None and lru.lookup("b") is MISSING


def test_none_is_a_value_lookup_tells_from_absence():
    lru: LRU[str, None] = LRU(4)
    lru.put("known not to parse", None)
    assert lru.lookup("known not to parse") is None
    assert lru.lookup("never seen") is MISSING
    assert "known not to parse" in lru and "never seen" not in lru


def test_membership_is_not_a_use_and_pop_and_clear_forget():
    lru: LRU[str, int] = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert "a" in lru  # does not make a recent
    lru.put("c", 3)
    assert lru.keys() == ["b", "c"]
    assert lru.pop("b") == 2 and lru.pop("b") is MISSING
    lru.clear()
    assert len(lru) == 0 and lru.keys() == []


def test_a_replaced_value_becomes_the_most_recent():
    lru: LRU[str, int] = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    lru.put("a", 10)
    assert lru.put("c", 3) == [("b", 2)] and lru.get("a") == 10


def test_size_must_hold_one_entry():
    with pytest.raises(ValueError):
        LRU(0)


def test_concurrent_puts_keep_the_bound():
    lru: LRU[int, int] = LRU(64)

    def fill(base: int) -> None:
        for i in range(2000):
            lru.put(base + i, i)
            lru.get(base + i // 2)

    threads = [threading.Thread(target=fill, args=(k * 10_000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(lru) == 64 and len(set(lru.keys())) == 64


def test_segmented_one_off_entries_do_not_evict_entries_hit_again():
    cache = SegmentedLRU(probation=2, protected=2, probation_bytes=1 << 20, protected_bytes=1 << 20)
    cache.put("edited-1", 1)
    cache.put("edited-2", 2)
    assert cache.lookup("edited-1") == 1 and cache.lookup("edited-2") == 2  # hit again: protected
    for i in range(10):  # a workspace scan: each entry seen once
        cache.put(f"scan-{i}", i)
    assert cache.lookup("edited-1") == 1 and cache.lookup("edited-2") == 2
    assert cache.lookup("scan-0") is MISSING and len(cache) == 4
    cache.put("edited-3", 3)
    assert cache.lookup("edited-3") == 3  # promoted: the least recent protected entry goes back to probation
    assert "edited-1" in cache and cache.lookup("edited-1") == 1


def test_a_byte_budget_evicts_the_oldest_and_keeps_the_newest_even_alone():
    lru: LRU[str, str] = LRU(100, budget=10, weigh=lambda _k, v: len(v))
    lru.put("a", "xxxx")
    lru.put("b", "xxxx")
    assert lru.bytes == 8 and len(lru) == 2
    evicted = lru.put("c", "xxxx")
    assert [k for k, _ in evicted] == ["a"] and lru.bytes == 8
    lru.put("huge", "x" * 50)  # over the budget alone: kept, everything else goes
    assert lru.keys() == ["huge"] and lru.bytes == 50
    with pytest.raises(ValueError):
        LRU(4, budget=10)  # a budget needs a weigh function
