"""Lines of Python source as Python, LSP and editors count them: a line ends at "\\r\\n", "\\r" or "\\n" only.

`str.splitlines` also breaks at form feed, vertical tab, \\x1c-\\x1e, U+0085, U+2028 and U+2029, all of which may
sit inside a Python line (in a string or a comment); splitting with it shifts every line number after them.
"""

from __future__ import annotations

import re

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def source_lines(text: str, keepends: bool = False) -> list[str]:
    """`text` split into lines (like `splitlines()`: no empty line after a final break), with their breaks if
    `keepends`."""
    if keepends:
        out: list[str] = []
        start = 0
        for m in LINE_BREAK.finditer(text):
            out.append(text[start : m.end()])
            start = m.end()
        if start < len(text):
            out.append(text[start:])
        return out
    lines = LINE_BREAK.split(text)
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    return lines if text else []
