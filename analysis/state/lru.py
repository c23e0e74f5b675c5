"""The one least-recently-used map every cache of a session is built from: bounded by entries and, where given a
`weigh`, by an estimate of the bytes its values hold; thread-safe (the language server analyses in worker
threads), O(1) per operation.

With a byte budget each entry is weighed once, when stored; entries are evicted oldest first until the total is
within the budget. The newest entry is always kept, even alone over the budget: a cache exists to share the
current value between its readers, and evicting it at once would only compute it again. `approx_bytes` is a
bounded deep estimate for values that have no cheaper measure.

`collect_every`: syntax trees hold reference cycles, which only the cyclic collector frees, and the language
server pauses it during triage and raises its thresholds (server/lsp/server.py): a cache of trees runs a full
collection once this many bytes were evicted since the last one, so memory follows the budget instead of the
collector's schedule. While the collector is paused (the server's analysis before its publish) that collection is
only marked due, and the server runs it after the publish (`take_due_collection`, server/lsp/collector.py): a full
pass over a warm server's trees took 270-440 ms, inside the first diagnostics' window.
"""

from __future__ import annotations

import dataclasses
import gc
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MIB = 1 << 20
MISSING: object = object()  # what `lookup` returns for an absent key (a cache may store None as a value)
_due = threading.Event()  # a collection was asked for while the collector was paused


def take_due_collection() -> bool:
    """Whether a cache asked for a collection while the collector was paused (and forget that it did)."""
    if not _due.is_set():
        return False
    _due.clear()
    return True


class LRU(Generic[K, V]):
    """At most `size` entries (and, with `weigh`, at most `budget` bytes as `weigh(key, value)` estimates them);
    a hit makes its entry the most recent, an insert past the bounds drops the least recent ones."""

    def __init__(
        self,
        size: int,
        budget: int | None = None,
        weigh: Callable[[K, V], int] | None = None,
        collect_every: int | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"an LRU holds at least one entry, not {size}")
        if (budget is None) != (weigh is None):
            raise ValueError("a byte budget needs a weigh function, and a weigh function a budget")
        self.size, self.budget, self.collect_every = size, budget, collect_every
        self._weigh = weigh
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._evicted_bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        """The estimated bytes held (0 without a weigh function)."""
        return self._bytes

    def lookup(self, key: K) -> V | object:
        """The value of `key` (now the most recent), or MISSING."""
        with self._lock:
            hit = self._entries.get(key, MISSING)
            if hit is MISSING:
                return MISSING
            self._entries.move_to_end(key)
            return hit[0]  # type: ignore[index]

    def get(self, key: K) -> V | None:
        """The value of `key` (now the most recent), or None."""
        hit = self.lookup(key)
        return None if hit is MISSING else hit  # type: ignore[return-value]

    def put(self, key: K, value: V) -> list[tuple[K, V]]:
        """Store `value` as the most recent; returns the entries this pushed out (oldest first), or nothing when
        that eviction ran a collection (`collect_every`)."""
        weight = max(0, int(self._weigh(key, value))) if self._weigh is not None else 0
        evicted: list[tuple[K, V]] = []
        with self._lock:
            old = self._entries.pop(key, MISSING)
            if old is not MISSING:
                self._bytes -= old[1]  # type: ignore[index]
            self._entries[key] = (value, weight)
            self._bytes += weight
            while len(self._entries) > self.size or (
                self.budget is not None and self._bytes > self.budget and len(self._entries) > 1
            ):
                old_key, (old_value, old_weight) = self._entries.popitem(last=False)
                self._bytes -= old_weight
                self._evicted_bytes += old_weight
                evicted.append((old_key, old_value))
            collect = self.collect_every is not None and self._evicted_bytes >= self.collect_every
            if collect:
                self._evicted_bytes = 0
        if collect:
            if not gc.isenabled():
                _due.set()  # paused by a caller in a hurry: it collects when it is done
                return evicted
            del evicted[:]  # what was evicted must be unreachable for the collection to free it
            gc.collect()
        return evicted

    def pop(self, key: K) -> V | object:
        """Remove `key` and return its value, or MISSING."""
        with self._lock:
            hit = self._entries.pop(key, MISSING)
            if hit is MISSING:
                return MISSING
            self._bytes -= hit[1]  # type: ignore[index]
            return hit[0]  # type: ignore[index]

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
            self._bytes = 0


def approx_bytes(value: object, limit: int = 10_000) -> int:
    """Rough deep size of `value`: containers, dataclasses and objects' attributes are followed, each object
    counted once, at most `limit` objects visited (what is left is not counted). An estimate for budgets."""
    seen: set[int] = set()
    stack = [value]
    total = 0
    while stack and len(seen) < limit:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        total += sys.getsizeof(item, 64)
        if isinstance(item, (str, bytes, bytearray, int, float, bool, type(None))):
            continue
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name, None) for f in dataclasses.fields(item))
        elif hasattr(item, "__dict__"):
            stack.extend(vars(item).values())
    return total
