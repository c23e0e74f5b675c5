"""The `tritonlens/status` notification: which runners the settings name and whether each is reachable, sent
when the runner settings change (health checks off the event loop)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..lsp.feature import Feature
from .compile import CompileFeature

if TYPE_CHECKING:
    from ...ascend_runner.client import RunnerSettings
    from ..lsp.core import TritonLensServer

STATUS_NOTIFICATION = "tritonlens/status"


class RunnerStatusFeature(Feature):
    """Sends `tritonlens/status` {runners: [{name, reachable, detail}]} when the runner settings change."""

    name = "runner-status"
    server: TritonLensServer  # set by register

    def __init__(self, compile: CompileFeature) -> None:
        super().__init__()
        self.compile = compile
        self._last: Any = None
        self.rows: list[dict[str, Any]] = []

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        self.service = self.compile.service

    def settings(self) -> list[RunnerSettings]:
        uris = list(self.server.config.folders) or [""]
        out: list[RunnerSettings] = []
        for uri in uris:
            settings = self.service.runner_settings(uri)
            if settings not in out:
                out.append(settings)
        return out

    def on_config(self) -> None:
        # Not urgent: the runner client's import and the survey wait until the first diagnostics are out, and the
        # import (about 0.1 s) runs off the event loop, which stays free for the editor's requests.
        self.server.after_first_answer(lambda: asyncio.get_running_loop().create_task(self._report_if_changed()))

    async def _report_if_changed(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, _import_runner_client)
        settings = self.settings()
        if settings == self._last:
            return
        self._last = settings
        await self.report(settings)

    async def report(self, settings: list[RunnerSettings] | None = None) -> list[dict[str, Any]]:
        from ..engine.runner_survey import survey

        settings = settings if settings is not None else self.settings()
        loop = asyncio.get_running_loop()
        rows: dict[str, dict[str, Any]] = {}
        for one in settings:
            # Health checks are network calls: off the event loop. Local envs are only looked up, not started.
            for row in await loop.run_in_executor(None, lambda s=one: survey(s, probe_local=False)):
                rows.setdefault(row["name"], row)
        self.rows = [{k: r[k] for k in ("name", "reachable", "detail")} for r in rows.values()]
        self.server.protocol.notify(STATUS_NOTIFICATION, {"runners": self.rows})
        return self.rows


def _import_runner_client() -> None:
    """Run in a worker thread: the runner client's first import (about 0.1 s) off the event loop."""
    from ...ascend_runner.client import RunnerSettings  # noqa: F401
