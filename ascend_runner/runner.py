"""The one interface every runner implements (local worker pools, a remote HTTP runner, ...).

`compile` takes a CompileRequest and always returns a CompileResult; `submit` takes a job envelope
(protocol.new_job) and returns a result envelope; `run`/`profile`/`verify` take their typed requests (RunRequest,
ProfileRequest, VerifyRequest) and return a result envelope. Its own module so each implementation imports it without
importing the others.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

from .protocol import CompileRequest, CompileResult, ProfileRequest, RunRequest, VerifyRequest, new_job


@runtime_checkable
class Runner(Protocol):
    def compile(
        self, req: CompileRequest, *, cancel: threading.Event | None = None, timeout_s: float | None = None
    ) -> CompileResult: ...

    def submit(
        self, job: dict[str, Any], *, cancel: threading.Event | None = None, timeout_s: float | None = None
    ) -> dict[str, Any]: ...

    def run(
        self, backend: str, payload: RunRequest, *, cancel: threading.Event | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]: ...

    def profile(
        self, backend: str, payload: ProfileRequest, *, cancel: threading.Event | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]: ...

    def verify(
        self, backend: str, payload: VerifyRequest, *, cancel: threading.Event | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]: ...

    def health(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class JobMethods:
    """run/profile/verify as thin wrappers over submit; any Runner may inherit them. They also take a payload as
    a plain dict (what a JSON client sends); the server's engines send the typed requests."""

    def submit(
        self, job: dict[str, Any], *, cancel: threading.Event | None = None, timeout_s: float | None = None
    ) -> dict[str, Any]:
        raise NotImplementedError

    def _kind(
        self, kind: str, backend: str, payload: Any, cancel: threading.Event | None, timeout_s: float | None
    ) -> dict[str, Any]:
        return self.submit(new_job(kind, backend, payload), cancel=cancel, timeout_s=timeout_s)

    def run(
        self,
        backend: str,
        payload: Any,
        *,
        cancel: threading.Event | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        return self._kind("run", backend, payload, cancel, timeout_s)

    def profile(
        self,
        backend: str,
        payload: Any,
        *,
        cancel: threading.Event | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        return self._kind("profile", backend, payload, cancel, timeout_s)

    def verify(
        self,
        backend: str,
        payload: Any,
        *,
        cancel: threading.Event | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        return self._kind("verify", backend, payload, cancel, timeout_s)
