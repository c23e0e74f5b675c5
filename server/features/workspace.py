"""The workspace index as a feature: every Python file's kernels and level-1 findings read from disk in the
background (server/features/workspace_index.py), the `tritonlens/kernelsChanged` notification, the closed files' rows of
`tritonlens/kernels`, and `tritonlens.reanalyze` (re-run triage on open documents and re-read the workspace)."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pygls.uris import to_fs_path

from ..lsp.analysis import index_file
from ..lsp.feature import Feature
from ..lsp.progress import work_done
from .workspace_index import WorkspaceIndex

if TYPE_CHECKING:
    from ..lsp.core import TritonLensServer

KERNELS_CHANGED = "tritonlens/kernelsChanged"
REANALYZE_COMMAND = "tritonlens.reanalyze"


class WorkspaceFeature(Feature):
    name = "workspace"
    server: TritonLensServer  # set by register

    def __init__(self) -> None:
        super().__init__()
        self.index: WorkspaceIndex | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tritonlens-reindex")
        self._notify: asyncio.TimerHandle | None = None

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        server.commands.add(
            REANALYZE_COMMAND, "Re-analyze open documents and re-read the workspace", self.reanalyze_command
        )

    # --- lifecycle ------------------------------------------------------------------------------------------
    def on_initialized(self) -> None:
        # The scan pauses while an open document is being analysed: the core's flag, shared.
        self.index = WorkspaceIndex(index_file, on_change=self._changed)
        self.index.editor_idle = self.server.editor_idle
        for folder in self.server.workspace.folders.values():
            self._add_root(folder.uri)

    def on_folders_changed(self, added: list[str], removed: list[str]) -> None:
        for uri in removed:
            path = to_fs_path(uri)
            if self.index is not None and path:
                self.index.remove_root(path)
        for uri in added:
            self._add_root(uri)

    def shutdown(self) -> None:
        if self.index is not None:
            self.index.stop()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _add_root(self, uri: str) -> None:
        path = to_fs_path(uri)
        if self.index is not None and path and os.path.isdir(path):
            self.index.add_root(path)

    # --- what closed files contribute ---------------------------------------------------------------------
    def indexed_files(self) -> list[Any]:
        return self.index.files() if self.index is not None else []

    # --- notifications ----------------------------------------------------------------------------------------
    def _changed(self) -> None:
        # Called from watcher threads: hop to the loop, and coalesce bursts into one notification.
        loop = self.server.loop
        if loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(self._schedule_notification)

    def _schedule_notification(self) -> None:
        if self._notify is not None:
            self._notify.cancel()
        self._notify = asyncio.get_running_loop().call_later(0.2, self._send_notification)

    def _send_notification(self) -> None:
        self._notify = None
        self.server.protocol.notify(KERNELS_CHANGED, {})

    # --- tritonlens.reanalyze ---------------------------------------------------------------------------------
    async def reanalyze_command(self, ls: Any, args: list[Any]) -> dict[str, Any]:
        """Re-run triage on open documents and re-read every workspace file, with cancellable progress."""
        ls.reanalyze_documents()
        index = self.index
        paths = [p for root in (index.roots if index else []) for p in index.candidates(root)] if index else []
        done = 0
        loop = asyncio.get_running_loop()
        async with work_done(ls, "tritonlens: re-reading the workspace") as progress:
            for path in paths:
                if progress.cancelled:
                    break
                await loop.run_in_executor(self._pool, self._refresh, path)
                done += 1
                if done % 10 == 0 or done == len(paths):
                    progress.report(f"{done}/{len(paths)} files", int(100 * done / max(len(paths), 1)))
        self._changed()
        return {"documents": len(ls.docs), "files": done, "total": len(paths), "cancelled": progress.cancelled}

    def _refresh(self, path: str) -> None:
        if self.index is not None:
            self.index.refresh(path, notify=False)
