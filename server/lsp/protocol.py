"""The JSON-RPC side of the server's messages: a request whose params do not fit the LSP schema is answered with
InvalidParams (never left waiting), a failed handler's error reaches the client as one plain sentence (the
traceback goes to the log), and a result already in JSON form (`Prebuilt`, e.g. thousands of code lens rows) is
sent as it is.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

from .convert import Prebuilt

log = logging.getLogger("tritonlens.lsp")

_MALFORMED = object()  # marks a request already answered with InvalidParams


class TritonLensProtocol(LanguageServerProtocol):
    """Answers requests whose params do not match the LSP schema, instead of leaving the client waiting."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                cause = exc.__cause__ or exc
                message = f"invalid params for {data.get('method')}: {str(cause).splitlines()[0] if str(cause) else ''}"
                self._send_response(data["id"], error=JsonRpcInvalidParams(message).to_response_error())
                return _MALFORMED
            raise

    def handle_message(self, message: Any) -> None:
        if message is _MALFORMED:
            return
        super().handle_message(message)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        """Errors reach the client as one plain sentence: pygls attaches the Python traceback of a failed handler
        (and names the exception's module); the traceback goes to the log only."""
        if error is None and isinstance(result, Prebuilt):
            # Already JSON (e.g. thousands of code lenses): converting it object by object would block the loop.
            self._result_types.pop(msg_id, None)
            self._send_data({"jsonrpc": "2.0", "id": msg_id, "result": list(result)})
            return
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            log.error("request %s failed: %s\n%s", msg_id, error.message, "".join(error.data["traceback"]))
            message = _EXCEPTION_PREFIX.sub("", error.message or "internal error")
            error = type(error)(code=error.code, message=message, data=None)
        super()._send_response(msg_id, result=result, error=error)


# "tritonlens.server.lsp.commands.CommandError: x is not open" -> "x is not open"
_EXCEPTION_PREFIX = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)?: ")
