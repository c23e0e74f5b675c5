"""Text a model wrote (an LLM's title, reasoning, a candidate's error message) shown as text, never as markup.

`markdown_literal` escapes every character Markdown gives a meaning to, so a title cannot open a link, an image or
an HTML tag in a hover or a report, and neutralises `command:` URIs (a VS Code hover may run a command link when
the server marks it trusted; a model must never be able to write one). Pure.
"""

from __future__ import annotations

import re

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~])")
_COMMAND_URI = re.compile(r"command\s*:", re.I)


def markdown_literal(text: str, limit: int = 4000) -> str:
    """`text` as literal Markdown (one paragraph per blank-line block kept), at most `limit` characters."""
    text = text[:limit]
    text = _COMMAND_URI.sub("command\u200b:", text)
    return _MARKDOWN.sub(r"\\\1", text)


def plain_line(text: str, limit: int = 160) -> str:
    """One line of model text for a title: control characters and newlines become spaces."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())[:limit]
