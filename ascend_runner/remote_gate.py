"""What stands between the network and the runner service's routes: nothing is read before the token is checked.

- `Gate` (ASGI middleware): the bearer token is checked from the request headers before any of the body is
  read (401 and the connection closed otherwise); bodies over the size limit get 413, bodies that take longer
  than `body_timeout_s` to arrive get 408.
- `guarded_protocol`: uvicorn's HTTP protocol with a deadline for request headers (a connection that opens and
  sends nothing, or trickles its headers, is closed) and a bound on connections still waiting for their
  headers (past it the connection waiting longest is closed), so idle unauthenticated clients cannot pile up
  nor lock out a client that sends its request at once.
- `RedactSecrets`: a logging filter that never lets the token, or the value of any secret-looking query
  parameter (`?token=...`), reach a log.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from typing import Any

from starlette.responses import JSONResponse

from .remote_tokens import DEFAULT_CLIENT, client_for

SECRET_QUERY = re.compile(r"(?i)([?&](?:access_)?(?:token|key|api_key|apikey|secret|password|auth)=)[^&\s\"']*")


CLIENT_SCOPE_KEY = "tritonlens.client"  # the ASGI scope key where the Gate leaves the caller's client name


def bearer_token(headers: list[tuple[bytes, bytes]]) -> bytes:
    given = b""
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, credentials = value.partition(b" ")
            if scheme.lower() == b"bearer":
                given = credentials.strip()
    return given


class Gate:
    """ASGI middleware: token from headers first, then a size- and time-bounded body. `token` is one token or
    client name -> token; the caller's client name is left in the scope under CLIENT_SCOPE_KEY."""

    def __init__(
        self, app: Any, token: str | dict[str, str], max_bytes: int, body_timeout_s: float = 30.0
    ) -> None:
        self.app = app
        tokens = {DEFAULT_CLIENT: token} if isinstance(token, str) else token
        self.tokens = {name: value.encode() for name, value in tokens.items()}
        self.max_bytes = max_bytes
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers") or []
        client = client_for(bearer_token(headers), self.tokens)
        if client is None:
            response = JSONResponse(
                {"detail": "missing or wrong bearer token"},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer", "Connection": "close"},
            )
            await response(scope, receive, send)
            return
        declared = dict(headers).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            response = JSONResponse(
                {"detail": "request body too large"}, status_code=413, headers={"Connection": "close"}
            )
            await response(scope, receive, send)
            return
        scope[CLIENT_SCOPE_KEY] = client
        seen = 0
        body_done = False
        deadline = time.monotonic() + self.body_timeout_s

        async def bounded_receive() -> dict[str, Any]:
            nonlocal seen, body_done
            if body_done:  # later receives wait for a disconnect (streams): no deadline there
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                from fastapi import HTTPException

                raise HTTPException(408, "the request body took too long to arrive") from None
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                from fastapi import HTTPException

                raise HTTPException(413, "request body too large")
            if message.get("type") != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        await self.app(scope, bounded_receive, send)


def guarded_protocol(header_timeout_s: float = 10.0, max_pending: int = 256) -> type:
    """uvicorn's h11 protocol with a header deadline and a cap on connections still sending headers."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            pending = self._pending()
            while len(pending) >= max_pending:
                # Too many connections have not sent a request head: drop the one waiting longest, not the
                # newcomer, so slow connections held open cannot lock out a client that sends its head at once.
                oldest = next(iter(pending))
                pending.pop(oldest, None)
                if not oldest.transport.is_closing():
                    oldest.transport.close()
            self._arm()

        def _pending(self) -> dict[Any, None]:
            """Connections waiting for a request head, oldest first (a dict keeps insertion order)."""
            state = self.server_state
            if not hasattr(state, "tritonlens_pending"):
                state.tritonlens_pending = {}  # type: ignore[attr-defined]
            return state.tritonlens_pending  # type: ignore[attr-defined,no-any-return]

        def _arm(self) -> None:
            pending = self._pending()
            pending.pop(self, None)
            pending[self] = None  # to the end: the newest waiting
            timer = getattr(self, "_header_timer", None)
            if timer is not None:
                timer.cancel()
            self._header_timer = self.loop.call_later(header_timeout_s, self._header_deadline)

        def _disarm(self) -> None:
            self._pending().pop(self, None)
            timer = getattr(self, "_header_timer", None)
            if timer is not None:
                timer.cancel()
                self._header_timer = None

        def _header_deadline(self) -> None:
            if self in self._pending() and not self.transport.is_closing():
                self.transport.close()
            self._pending().pop(self, None)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not None and not self.cycle.response_complete:
                self._disarm()  # a whole request head arrived (and passed or failed the gate)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request's head must arrive in time too

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return GuardedH11Protocol


class RedactSecrets(logging.Filter):
    """Replace the token and secret-looking query values in every log record."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def _clean(self, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        for secret in self.secrets:
            value = value.replace(secret, "***")
        return SECRET_QUERY.sub(r"\1***", value)

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self._clean(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(self._clean(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: self._clean(v) for k, v in record.args.items()}
        return True


def install_redaction(token: str | list[str]) -> RedactSecrets:
    """Attach the filter to uvicorn's loggers and handlers (their access log carries full request lines)."""
    flt = RedactSecrets([token] if isinstance(token, str) else list(token))
    for name in ("uvicorn", "uvicorn.access", "uvicorn.error", "tritonlens.runner"):
        logger = logging.getLogger(name)
        logger.addFilter(flt)
        for handler in logger.handlers:
            handler.addFilter(flt)
    return flt


def uvicorn_server(
    app: Any,
    *,
    token: str | list[str],
    host: str,
    port: int,
    header_timeout_s: float = 10.0,
    max_pending: int = 256,
    log_level: str = "info",
    **uvicorn_options: Any,
) -> Any:
    """A uvicorn.Server for the service with the guards above: header deadline, pending-connection cap,
    bounded keep-alive, redacted logs. uvicorn_options: e.g. ssl_certfile / ssl_keyfile."""
    import uvicorn

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded_protocol(header_timeout_s, max_pending),
        timeout_keep_alive=5,
        log_level=log_level,
        **uvicorn_options,
    )
    server = uvicorn.Server(config)
    install_redaction(token)  # after Config: it set up uvicorn's handlers
    return server
