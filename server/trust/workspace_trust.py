"""Workspace trust: in a workspace the user has not trusted only level 1 runs (pure analysis of the text:
nothing is imported, compiled, profiled or recorded), and its settings that name executables, runner URLs or
token/key variables are ignored (a folder's `.vscode/settings.json` can say anything).

The client says the trust state in `initializationOptions.workspaceTrust` ("trusted" or "untrusted"; VS Code
sends `workspace.isTrusted`) and `tritonlens/workspaceTrust` ({"trusted": bool}) when the user changes it.
A client that says nothing is *undecided*: the server's own escalations (compile on save, on a symptom) stay
off until the user allows them, while what the user asks for explicitly (a command) runs, and folder-scoped
settings naming executables are ignored as in an untrusted workspace.
"""

from __future__ import annotations

import enum
import logging
from typing import Any

from lsprotocol import types

from ..lsp.feature import Feature

log = logging.getLogger("tritonlens.lsp")

TRUST_OPTION = "workspaceTrust"
TRUST_NOTIFICATION = "tritonlens/workspaceTrust"
# Commands that import, compile, run or record the user's code (worker processes of a runner).
CODE_RUNNING_COMMANDS = frozenset(
    {"tritonlens.analyzeKernel", "tritonlens.profileKernel", "tritonlens.optimizeKernel", "tritonlens.recordLaunches"}
)
# Keys of a folder's `tritonlens` section that name executables, runner URLs or token/key variables.
RESTRICTED_KEYS = ("runners", "llm", "interpreter")
UNTRUSTED_MESSAGE = (
    "this workspace is not trusted: tritonlens only reads its text (level 1); trust the workspace to compile, "
    "profile, record or optimize its kernels"
)


class Trust(enum.Enum):
    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"
    UNDECIDED = "undecided"


def trust_from_options(options: Any) -> Trust:
    """The trust state an `initializationOptions` object declares (UNDECIDED when it says nothing usable)."""
    value = options.get(TRUST_OPTION) if isinstance(options, dict) else None
    if value is True or value == "trusted":
        return Trust.TRUSTED
    if value is False or value == "untrusted":
        return Trust.UNTRUSTED
    return Trust.UNDECIDED


def trust_of(server: Any) -> Trust:
    """The trust state the server holds (TrustFeature keeps it on the server); UNDECIDED for a server built
    without that feature (unit tests of others)."""
    state = getattr(server, "workspace_trust", None)
    return state if isinstance(state, Trust) else Trust.UNDECIDED


def may_escalate(server: Any) -> bool:
    """The server's own escalations (levels 3-4 without a command) run in a trusted workspace only."""
    return trust_of(server) is Trust.TRUSTED


def refusal_for_command(server: Any, command: str) -> str | None:
    """Why `command` may not run here, or None: code-running commands are refused in an untrusted workspace."""
    if command in CODE_RUNNING_COMMANDS and trust_of(server) is Trust.UNTRUSTED:
        return UNTRUSTED_MESSAGE
    return None


def restrict_folder_section(raw: Any, trust: Trust) -> tuple[Any, list[str]]:
    """A folder's `tritonlens` section without the keys that name executables, URLs or secrets, unless the
    workspace is trusted; returns the section and the keys dropped."""
    if trust is Trust.TRUSTED or not isinstance(raw, dict):
        return raw, []
    dropped = [key for key in RESTRICTED_KEYS if key in raw]
    return {k: v for k, v in raw.items() if k not in dropped}, dropped


class TrustFeature(Feature):
    """Holds the trust state; the core and the features ask `may_escalate` / `refusal_for_command`."""

    name = "trust"

    def __init__(self) -> None:
        super().__init__()
        self._state = Trust.UNDECIDED

    @property
    def state(self) -> Trust:
        return self._state

    @state.setter
    def state(self, value: Trust) -> None:
        self._state = value
        if getattr(self, "server", None) is not None:
            self.server.workspace_trust = value  # what trust_of reads: no feature looks another up

    def register(self, server: Any) -> None:
        super().register(server)
        server.workspace_trust = self._state
        server.command_guard = lambda command: refusal_for_command(server, command)

        @server.feature(TRUST_NOTIFICATION)
        async def on_trust(ls: Any, params: Any) -> None:
            trusted = getattr(params, "trusted", None)
            if trusted is None and isinstance(params, dict):
                trusted = params.get("trusted")
            if isinstance(trusted, bool):
                self.state = Trust.TRUSTED if trusted else Trust.UNTRUSTED
                log.info("workspace trust: %s", self.state.value)
                await ls.refresh_config()

    def on_initialized(self) -> None:
        self.state = trust_from_options(self.server.init_options)
        if self.state is not Trust.TRUSTED:
            log.info("workspace trust: %s (level 1 only for the server's own work)", self.state.value)


__all__ = [
    "TRUST_NOTIFICATION",
    "TRUST_OPTION",
    "Trust",
    "TrustFeature",
    "may_escalate",
    "refusal_for_command",
    "restrict_folder_section",
    "trust_from_options",
    "types",
]
