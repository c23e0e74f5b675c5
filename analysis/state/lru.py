"""The one least-recently-used map every cache of a session is built from: bounded, thread-safe (the language
server analyses in worker threads), O(1) per operation."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MISSING: object = object()  # what `lookup` returns for an absent key (a cache may store None as a value)


class LRU(Generic[K, V]):
    """At most `size` entries; a hit makes its entry the most recent, an insert past `size` drops the least
    recent one."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"an LRU holds at least one entry, not {size}")
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def lookup(self, key: K) -> V | object:
        """The value of `key` (now the most recent), or MISSING."""
        with self._lock:
            hit = self._entries.get(key, MISSING)
            if hit is not MISSING:
                self._entries.move_to_end(key)
            return hit

    def get(self, key: K) -> V | None:
        """The value of `key` (now the most recent), or None."""
        hit = self.lookup(key)
        return None if hit is MISSING else hit  # type: ignore[return-value]

    def put(self, key: K, value: V) -> list[tuple[K, V]]:
        """Store `value` as the most recent; returns the entries this pushed out (oldest first)."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            evicted = []
            while len(self._entries) > self.size:
                evicted.append(self._entries.popitem(last=False))
            return evicted

    def pop(self, key: K) -> V | object:
        """Remove `key` and return its value, or MISSING."""
        with self._lock:
            return self._entries.pop(key, MISSING)

    def __contains__(self, key: object) -> bool:
        """Whether `key` is held (not counted as a use)."""
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def keys(self) -> list[K]:
        """Held keys, least recent first (a snapshot)."""
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
