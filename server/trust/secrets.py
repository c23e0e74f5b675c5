"""The process's secrets and the one redactor every verdict, report, log record and LLM prompt goes through.

The values come from the environment when asked (keys can be set while the server runs): every variable whose name
says key, token, secret, password or credential, plus the names the user's settings point at (an LLM's
`apiKeyEnv`, a remote runner's `tokenEnv`), which `register_secret_name` records as they are read.
"""

from __future__ import annotations

import logging
import os
import threading

from ...analysis.trust.redaction import Redactor

_names: set[str] = set()
_lock = threading.Lock()


def register_secret_name(name: str | None) -> None:
    if name:
        with _lock:
            _names.add(name)


def redactor() -> Redactor:
    with _lock:
        names = set(_names)
    return Redactor.from_environment(os.environ, names)


class RedactingFilter(logging.Filter):
    """Rewrites each log record's message with secrets taken out (the arguments are folded in first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        r = redactor()
        if r:
            message = record.getMessage()
            cleaned = r.text(message)
            if cleaned != message:
                record.msg, record.args = cleaned, None
        return True


def install_log_redaction(*handlers: logging.Handler) -> None:
    """Add the filter to `handlers` (default: the root logger's): records of every logger pass them."""
    for handler in handlers or tuple(logging.getLogger().handlers):
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
