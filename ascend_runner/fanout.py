"""Many runner calls at once, results back in submission order as soon as each is ready.

Batch work (`optimize DIR`, `bench`) fans its jobs out with `in_order`, sized by `parallelism(runner)`: a
LocalRunner takes as many jobs as it has workers, a RayRunner as many as the cluster has actors for, a remote
runner what its service allows. Results stream back in order (result i is yielded once results 0..i are
done), with a callback per finished job for progress.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def parallelism(runner: Any, kind: str = "run", backend: str = "cuda") -> int:
    """How many jobs `runner` takes at once (1 when it does not say)."""
    ask = getattr(runner, "parallelism", None)
    if callable(ask):
        try:
            return max(1, int(ask(kind, backend)))
        except Exception:  # a runner that cannot tell (cluster gone): run one at a time
            return 1
    return 1


def in_order(
    calls: Sequence[Callable[[], T]],
    width: int,
    on_done: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> Iterator[T]:
    """Run `calls` with at most `width` at once; yield their results in order. `on_done(finished, total)`
    after each one finishes (in any order). Calls not yet started when `cancel` is set are skipped."""
    total = len(calls)
    finished = 0
    lock = threading.Lock()

    def done(_: Future[Any]) -> None:
        nonlocal finished
        with lock:
            finished += 1
            count = finished
        if on_done is not None:
            on_done(count, total)

    def guarded(call: Callable[[], T]) -> T:
        if cancel is not None and cancel.is_set():
            raise CancelledRun()
        return call()

    with ThreadPoolExecutor(max_workers=max(1, width), thread_name_prefix="tritonlens-fanout") as pool:
        futures = [pool.submit(guarded, call) for call in calls]
        for future in futures:
            future.add_done_callback(done)
        for future in futures:
            yield future.result()


class CancelledRun(Exception):
    """A call skipped because the batch was cancelled before it started."""
