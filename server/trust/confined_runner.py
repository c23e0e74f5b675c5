"""A runner whose compile jobs are marked untrusted: the worker compiles them in a confined fresh process.

Compiling runs a file's module-level code (source_module.py executes the buffer to find its kernels), so an LLM's
text is compiled only this way; everything else is the wrapped runner's."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from typing import Any


class ConfinedCompiles:
    def __init__(self, runner: Any, allow_unsandboxed: bool = False) -> None:
        self.runner = runner
        self.allow_unsandboxed = allow_unsandboxed

    def compile(
        self,
        req: Any,
        *,
        cancel: threading.Event | None = None,
        timeout_s: float | None = None,
        function_sources: Mapping[str, str] | None = None,
        on_start: Callable[[], None] | None = None,
    ) -> Any:
        marked = dataclasses.replace(req, untrusted=True, allow_unsandboxed=self.allow_unsandboxed)
        kwargs: dict[str, Any] = {"cancel": cancel, "timeout_s": timeout_s}
        if function_sources is not None:
            kwargs["function_sources"] = function_sources
        if on_start is not None:
            kwargs["on_start"] = on_start
        return self.runner.compile(marked, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.runner, name)
