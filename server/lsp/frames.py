"""Reading LSP frames leniently, so that one bad frame costs that message only, never the stream.

pygls' reader accepts exactly `Content-Length: N\\r\\n` (case, spacing and CRLF included); any other spelling
(`content-length:`, trailing spaces, LF-only header lines, as clients in the wild send them) was skipped and
every later frame misread, so the server lived on without ever answering. Here header names are matched
case-insensitively, values are stripped, lines may end with LF or CRLF, and a header block without a usable
length is dropped with a log line; the reader then resynchronises on the next `Content-Length` header, even one
glued to the end of an unframed body. A body that is not JSON is answered with a JSON-RPC parse error.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO, Protocol

from pygls.io_ import StdinAsyncReader, StdoutWriter

log = logging.getLogger("tritonlens.lsp.io")

MAX_HEADER_LINE = 64 * 1024  # longer "header lines" are garbage; read and dropped in pieces
MAX_BODY = 256 * 1024 * 1024  # a larger claimed length is refused (its bytes are read and dropped)
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\S*)", re.IGNORECASE)


class FrameReader(Protocol):
    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


class BoundedStdinReader(StdinAsyncReader):
    """pygls' stdin reader with header lines bounded in length."""

    def readline(self) -> Awaitable[bytes]:
        return self.loop.run_in_executor(self.executor, self.stdin.readline, MAX_HEADER_LINE)


async def read_header_block(reader: FrameReader) -> tuple[int | None, bool]:
    """Read one header block: (its content length, or None if it had no usable one; False at end of stream)."""
    length: int | None = None
    seen = False
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # asyncio's StreamReader: a line over its limit (already dropped from its buffer)
            seen = True
            continue
        except asyncio.IncompleteReadError as exc:
            line = exc.partial
        if not line:
            return length, False
        ended = line.endswith(b"\n")
        stripped = line.strip()
        if not stripped:
            if seen:
                return length, True
            continue  # blank lines between frames
        if not ended and len(line) >= MAX_HEADER_LINE:
            seen = True
            continue
        seen = True
        # The last one on the line: garbage (an unframed body) before a real header resynchronises here.
        found = [m.group(1) for m in _LENGTH.finditer(line)]
        if found:
            value = found[-1]
            length = int(value) if value.isdigit() else None
            if length is None:
                log.warning("LSP frame with an unreadable Content-Length %r", value[:40])


async def _discard(reader: FrameReader, n: int) -> bool:
    while n > 0:
        chunk = await reader.readexactly(min(n, 1 << 20))
        if not chunk:
            return False
        n -= len(chunk)
    return True


def handle_body(body: bytes, protocol: Any, on_error: Callable[[Exception], None]) -> None:
    """Decode and dispatch one message; a broken one is answered (parse error) or logged, never raised."""
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except (ValueError, UnicodeDecodeError) as exc:
        log.warning("LSP message is not JSON (%s); answered with a parse error", exc)
        error = {"code": -32700, "message": f"Parse error: {exc}"}
        protocol._send_data({"jsonrpc": "2.0", "id": None, "error": error})
        return
    except Exception as exc:  # structuring a message pygls cannot represent
        log.warning("LSP message could not be read: %s", exc)
        on_error(exc)
        return
    try:
        protocol.handle_message(message)
    except Exception as exc:
        log.warning("LSP message could not be handled: %s", exc)
        on_error(exc)


async def serve_frames(stop_event: threading.Event, reader: FrameReader, protocol: Any, on_error: Any) -> None:
    """The message loop: one header block and body at a time until the stream ends or the server stops."""

    def report(exc: Exception) -> None:
        try:
            on_error(exc, type(exc))
        except Exception:
            log.exception("error handler failed")

    while not stop_event.is_set():
        length, more = await read_header_block(reader)
        if length is None:
            if more:
                log.warning("LSP header block without a usable Content-Length: skipped")
                continue
            break
        if length > MAX_BODY:
            log.warning("LSP message of %d bytes refused (limit %d)", length, MAX_BODY)
            if not await _discard(reader, length):
                break
            continue
        try:
            body = await reader.readexactly(length) if length else b""
        except asyncio.IncompleteReadError:
            break
        if len(body) < length:
            break  # end of stream inside a body
        handle_body(body, protocol, report)
        if not more:
            break


def start_io(server: Any, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """`LanguageServer.start_io` with the lenient reader."""
    server._stop_event = threading.Event()
    reader = BoundedStdinReader(stdin or sys.stdin.buffer, server.thread_pool)
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    try:
        asyncio.run(serve_frames(server._stop_event, reader, server.protocol, server.report_server_error))
    except BrokenPipeError:
        log.error("the client's pipe closed: shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


def start_tcp(server: Any, host: str, port: int) -> None:
    """`LanguageServer.start_tcp` with the lenient reader."""
    server._stop_event = stop_event = threading.Event()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)
        await serve_frames(stop_event, reader, server.protocol, server.report_server_error)
        server.shutdown()

    async def main() -> None:
        server._server = await asyncio.start_server(connection, host, port, limit=MAX_HEADER_LINE)
        async with server._server:
            await server._server.serve_forever()

    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        log.debug("TCP server cancelled")
