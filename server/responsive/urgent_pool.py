"""`UrgentFirstPool`: the analysis threads of the language server, where a document a request waits for
(hover, code actions, a pull) is analysed at once instead of behind every document opened before it.

Background analyses (a document opened or edited) run at most `background` at a time, oldest first: triage is
pure Python, so more threads only share one interpreter lock and make each analysis slower. A job whose key is
urgent skips the queue and gets a thread of its own (up to `max_threads` in all), and no background analysis
starts while it runs, so 200 documents opened at once, or a few documents whose analyses never end, cannot make
a hover wait for them.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


class _Job:
    __slots__ = ("args", "fn", "future", "key")

    def __init__(self, key: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.key, self.fn, self.args = key, fn, args
        self.future: Future[Any] = Future()


class UrgentFirstPool:
    def __init__(self, background: int, max_threads: int, name: str) -> None:
        self._background = max(1, background)
        self._max_threads = max(self._background + 1, max_threads)
        self._name = name
        self._queue: deque[_Job] = deque()
        self._urgent: set[str] = set()
        self._cond = threading.Condition()
        self._running_background = 0
        self._running_urgent = 0
        self._idle = 0
        self._threads = 0
        self._closed = False

    def submit(self, key: str, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        job = _Job(key, fn, args)
        with self._cond:
            if self._closed:
                raise RuntimeError("the analysis pool is shut down")
            self._queue.append(job)
            self._wake()
        return job.future

    def prioritize(self, key: str) -> None:
        """A request waits for `key`'s analysis: its queued (or next) job runs before every background one."""
        with self._cond:
            self._urgent.add(key)
            self._wake()

    def shutdown(self) -> None:
        """Cancel what is queued; running analyses finish on their own (their results are dropped)."""
        with self._cond:
            self._closed = True
            while self._queue:
                self._queue.popleft().future.cancel()
            self._cond.notify_all()

    # -- threads -------------------------------------------------------------------------------------------
    def _wake(self) -> None:
        if self._runnable() is None:
            return
        if self._idle:
            self._cond.notify()
        elif self._threads < self._max_threads:
            self._threads += 1
            threading.Thread(target=self._work, name=f"{self._name}-{self._threads}", daemon=True).start()

    def _runnable(self) -> _Job | None:
        """The job to start now (under the lock), or None: urgent first, background within its limit."""
        for job in self._queue:
            if job.key in self._urgent:
                return job
        # While a request's analysis runs, no background one starts: it would only share the interpreter lock.
        if self._queue and self._running_urgent == 0 and self._running_background < self._background:
            return self._queue[0]
        return None

    def _work(self) -> None:
        while True:
            with self._cond:
                job = self._runnable()
                while job is None and not self._closed:
                    self._idle += 1
                    self._cond.wait()
                    self._idle -= 1
                    job = self._runnable()
                if job is None:
                    self._threads -= 1
                    return
                self._queue.remove(job)
                urgent = job.key in self._urgent
                self._urgent.discard(job.key)
                if urgent:
                    self._running_urgent += 1
                else:
                    self._running_background += 1
            try:
                if job.future.set_running_or_notify_cancel():
                    try:
                        job.future.set_result(job.fn(*job.args))
                    except BaseException as exc:  # handed to the awaiting coroutine
                        job.future.set_exception(exc)
            finally:
                with self._cond:
                    if urgent:
                        self._running_urgent -= 1
                    else:
                        self._running_background -= 1
                    self._wake()
