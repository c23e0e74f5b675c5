"""Registry of `workspace/executeCommand` commands, advertised in `executeCommandProvider.commands`.

Later levels add commands (e.g. `tritonlens.analyzeKernel`) from an extension module's `install(server)` hook,
which runs before `initialize`, so the command is advertised and the VS Code client can offer it unchanged.
A handler gets the server and the command's JSON arguments as a list; it may be sync or async. Errors become
JSON-RPC error responses; they never stop the server.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

CommandHandler = Callable[[Any, list[Any]], Any]  # (server, arguments) -> result or awaitable


class CommandError(ValueError):
    """Bad arguments for a command; answered as InvalidParams with this message."""


@dataclass(frozen=True)
class CommandSpec:
    name: str
    title: str
    handler: CommandHandler


class CommandRegistry:
    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._specs: dict[str, CommandSpec] = {}

    def add(self, name: str, title: str, handler: CommandHandler) -> None:
        if name in self._specs:
            raise ValueError(f"command {name} registered twice")
        self._specs[name] = CommandSpec(name, title, handler)

        async def run(ls: Any, *args: Any) -> Any:
            guard = getattr(ls, "command_guard", None)  # workspace trust (server/trust)
            refusal = guard(name) if guard is not None else None
            if refusal:
                raise JsonRpcInvalidParams(f"{name}: {refusal}")
            try:
                result = handler(ls, list(args))
                if inspect.isawaitable(result):
                    result = await result
                return result
            except CommandError as exc:
                raise JsonRpcInvalidParams(f"{name}: {exc}") from exc
            except Exception as exc:
                log.exception("command %s failed", name)
                raise JsonRpcInternalError(f"{name} failed: {exc}") from exc

        self._server.command(name)(run)

    def command(self, name: str, title: str) -> Callable[[CommandHandler], CommandHandler]:
        """Decorator form of `add`."""

        def decorator(handler: CommandHandler) -> CommandHandler:
            self.add(name, title, handler)
            return handler

        return decorator

    def specs(self) -> list[CommandSpec]:
        return sorted(self._specs.values(), key=lambda s: s.name)


def arg(args: list[Any], index: int, kind: type, name: str) -> Any:
    """Fetch one positional command argument with a clear message when it is missing or mistyped."""
    if index >= len(args):
        raise CommandError(f"missing argument {index + 1} ({name})")
    value = args[index]
    if not isinstance(value, kind):
        raise CommandError(f"argument {index + 1} ({name}) must be {kind.__name__}")
    return value
