"""`ByteLRU`: a thread-safe least-recently-used map bounded by an estimate of the bytes its values hold.

Each entry is weighed once, when stored, by the cache's `weigh(key, value)`; entries are evicted oldest first
until the total is within the budget. The newest entry is always kept, even alone over the budget: a cache
exists to share the current value between its readers, and evicting it at once would only compute it again.
`approx_bytes` is a bounded deep estimate for values that have no cheaper measure.

`collect_every`: syntax trees hold reference cycles (a node's memo refers to the node), which only the cyclic
collector frees, and the language server pauses it during triage and raises its thresholds (server/lsp.py): a
cache of trees runs a full collection once this many bytes were evicted since the last one, so memory follows
the budget instead of the collector's schedule.
"""

from __future__ import annotations

import dataclasses
import gc
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MIB = 1 << 20
_MISSING: Any = object()


class ByteLRU(Generic[K, V]):
    """Least-recently-used entries within `budget` bytes (as `weigh` estimates them)."""

    def __init__(
        self, budget: int, weigh: Callable[[K, V], int], max_entries: int | None = None,
        collect_every: int | None = None,
    ) -> None:
        self.budget = budget
        self.max_entries = max_entries
        self.collect_every = collect_every
        self._evicted_bytes = 0
        self._weigh = weigh
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def get(self, key: K, default: Any = None) -> V | Any:
        """The value (now the most recently used), or `default`."""
        with self._lock:
            hit = self._items.get(key, _MISSING)
            if hit is _MISSING:
                return default
            self._items.move_to_end(key)
            return hit[0]

    def pop(self, key: K, default: Any = None) -> V | Any:
        with self._lock:
            hit = self._items.pop(key, _MISSING)
            if hit is _MISSING:
                return default
            self._bytes -= hit[1]
            return hit[0]

    def put(self, key: K, value: V) -> list[tuple[K, V]]:
        """Store `value` as the most recently used; returns what was evicted to make room (oldest first), or
        nothing when that eviction ran a collection (`collect_every`)."""
        weight = max(0, int(self._weigh(key, value)))
        evicted: list[tuple[K, V]] = []
        with self._lock:
            old = self._items.pop(key, _MISSING)
            if old is not _MISSING:
                self._bytes -= old[1]
            self._items[key] = (value, weight)
            self._bytes += weight
            while len(self._items) > 1 and (
                self._bytes > self.budget or (self.max_entries is not None and len(self._items) > self.max_entries)
            ):
                old_key, (old_value, old_weight) = self._items.popitem(last=False)
                self._bytes -= old_weight
                self._evicted_bytes += old_weight
                evicted.append((old_key, old_value))
            collect = self.collect_every is not None and self._evicted_bytes >= self.collect_every
            if collect:
                self._evicted_bytes = 0
        if collect:
            del evicted[:]  # what was evicted must be unreachable for the collection to free it
            gc.collect()
        return evicted

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
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
