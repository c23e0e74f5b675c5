"""The cyclic garbage collector while the editor waits: paused from a document's analysis to its publish, and
the full collections the caches ask for (analysis/state/lru.py, `collect_every`) run after the publish.

Triage makes many short-lived AST objects and no cycles worth collecting mid-run. A full collection walks every
tracked object (the trees of up to 16 cached document versions): 270-440 ms for a warm server holding ten
2,000-line files, which measured as the slow tail of the first diagnostics (issue 23). Both the young collection
that follows re-enabling and a due full one therefore happen once the diagnostics are out.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ...analysis.state.lru import take_due_collection

_lock = threading.Lock()
_holds = 0  # pauses in force (analyses in several threads, each until its publish on the event loop)


class Pause:
    """One pause of the collector that may begin in a worker thread (when the analysis starts: a queued one holds
    nothing, so a burst of opened documents never keeps it off) and end on the event loop (after the publish)."""

    def __init__(self) -> None:
        self._held = self._ended = False

    def begin(self) -> None:
        global _holds
        with _lock:
            if not self._held and not self._ended:  # a late begin (its waiter was cancelled) holds nothing
                self._held = True
                _holds += 1
                gc.disable()

    def end(self) -> None:
        global _holds
        with _lock:
            self._ended = True
            if self._held:
                self._held = False
                _holds -= 1
                if _holds == 0:
                    gc.enable()


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the block; on again when the last pause in force ends."""
    pause = Pause()
    pause.begin()
    try:
        yield
    finally:
        pause.end()


def collect_if_due() -> bool:
    """Run the full collection a cache asked for while the collector was paused; True if one ran."""
    with _lock:
        if _holds:
            return False  # another analysis is under way: the last one to publish collects
    if not take_due_collection():
        return False
    gc.collect()
    return True
