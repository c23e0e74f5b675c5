"""`$/progress` for long work (compiles, profiles) with cancellation from the editor.

Usage from a command or pipeline step running on the server's event loop:

    async with work_done(server, "Compiling add_kernel") as progress:
        result = await loop.run_in_executor(None, runner.compile, req, progress.cancel_event)
        progress.report("analyzing", 80)

`progress.cancel_event` is a threading.Event set when the user cancels in the editor, so it can be handed to
runner calls that run in worker threads.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)


class ProgressHandle:
    def __init__(
        self,
        server: LanguageServer | None,
        token: types.ProgressToken | None,
        cancel_event: threading.Event | None = None,
    ) -> None:
        self._server = server
        self.token = token
        self.cancel_event = cancel_event if cancel_event is not None else threading.Event()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def report(self, message: str | None = None, percentage: int | None = None) -> None:
        if self._server is None or self.token is None:
            return
        value = types.WorkDoneProgressReport(message=message, percentage=percentage, cancellable=True)
        self._server.work_done_progress.report(self.token, value)


def client_supports_progress(server: LanguageServer) -> bool:
    window = server.client_capabilities.window
    return bool(window and window.work_done_progress)


@asynccontextmanager
async def work_done(
    server: LanguageServer,
    title: str,
    *,
    token: types.ProgressToken | None = None,
    cancellable: bool = True,
    cancel_event: threading.Event | None = None,
) -> AsyncIterator[ProgressHandle]:
    """Report begin/end around a block; a client without progress support gets a silent handle.

    `cancel_event`: an event the caller also sets (e.g. when newer work supersedes this); the editor's cancel
    sets it too."""
    if token is None:
        if not client_supports_progress(server):
            yield ProgressHandle(None, None, cancel_event)
            return
        token = f"tritonlens/{uuid.uuid4().hex}"
        try:
            await server.work_done_progress.create_async(token)
        except Exception as exc:  # the client refused: carry on without a progress bar
            log.info("progress not created: %s", exc)
            yield ProgressHandle(None, None, cancel_event)
            return
    handle = ProgressHandle(server, token, cancel_event)
    progress = server.work_done_progress
    progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=cancellable, percentage=0))
    cancel_future: Any = progress.tokens.get(token)
    if cancel_future is not None:
        # pygls cancels this future when the client sends window/workDoneProgress/cancel.
        cancel_future.add_done_callback(lambda _f: handle.cancel_event.set())
    try:
        yield handle
    finally:
        message = "cancelled" if handle.cancelled else "done"
        progress.end(token, types.WorkDoneProgressEnd(message=message))
        progress.tokens.pop(token, None)
