"""Lines of Python source and positions in them as Python, LSP and editors count them: a line ends at "\\r\\n",
"\\r" or "\\n" only; `findings.Span` columns are 0-based characters, where ast gives UTF-8 byte columns
(`SourceText` converts them), and where a syntax error sits (`syntax_error_info`).

`str.splitlines` also breaks at form feed, vertical tab, \\x1c-\\x1e, U+0085, U+2028 and U+2029, all of which may
sit inside a Python line (in a string or a comment); splitting with it shifts every line number after them.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..core.findings import Span

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


# -- positions: ast byte columns as character columns, syntax errors ---------------------------------------
@dataclass(frozen=True)
class SyntaxErrorInfo:
    """Where the Python parser stopped (1-based line, 0-based character column)."""

    message: str
    line: int
    col: int
    end_line: int
    end_col: int

    @property
    def span(self) -> Span:
        return Span(self.line, self.col, self.end_line, self.end_col)


class SourceText:
    """Line table of the source, converting ast's UTF-8 byte columns into character columns."""

    def __init__(self, source: str) -> None:
        self.lines = LINE_BREAK.split(source) if "\r" in source else source.split("\n")
        self._encoded: dict[int, bytes] = {}
        # In an ASCII file byte columns are character columns: spans and texts need no encoding at all.
        self.ascii = source.isascii()

    def line(self, lineno: int) -> str:
        return self.lines[lineno - 1] if 1 <= lineno <= len(self.lines) else ""

    def _bytes(self, lineno: int) -> bytes:
        cached = self._encoded.get(lineno)
        if cached is None:
            cached = self.line(lineno).encode("utf-8", errors="surrogatepass")
            self._encoded[lineno] = cached
        return cached

    def char_col(self, lineno: int, byte_col: int) -> int:
        if self.ascii:
            return byte_col
        text = self.line(lineno)
        if text.isascii():
            return byte_col
        return len(self._bytes(lineno)[:byte_col].decode("utf-8", errors="ignore"))

    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", None) or line
        byte_col = getattr(node, "col_offset", 0)
        end_byte = getattr(node, "end_col_offset", None)
        if self.ascii:
            return Span(line, byte_col, end_line, end_byte if end_byte is not None else byte_col)
        col = self.char_col(line, byte_col)
        end_col = self.char_col(end_line, end_byte) if end_byte is not None else col
        return Span(line, col, end_line, end_col)

    def text(self, node: ast.AST) -> str:
        line = getattr(node, "lineno", None)
        end_line = getattr(node, "end_lineno", None)
        col = getattr(node, "col_offset", None)
        end_col = getattr(node, "end_col_offset", None)
        if line is None or end_line is None or col is None or end_col is None:
            return ""
        if self.ascii:
            # Same slices as the byte path below: ASCII characters are single bytes.
            if line == end_line:
                return self.line(line)[col:end_col]
            parts = [self.line(line)[col:]]
            parts.extend(self.line(n) for n in range(line + 1, end_line))
            parts.append(self.line(end_line)[:end_col])
            return "\n".join(parts)
        if line == end_line:
            raw = self._bytes(line)[col:end_col]
        else:
            parts_b = [self._bytes(line)[col:]]
            parts_b.extend(self._bytes(n) for n in range(line + 1, end_line))
            parts_b.append(self._bytes(end_line)[:end_col])
            raw = b"\n".join(parts_b)
        return raw.decode("utf-8", errors="replace")


def syntax_error_info(exc: SyntaxError, lines: SourceText) -> SyntaxErrorInfo:
    message = exc.msg or "invalid syntax"
    line = exc.lineno or 1
    line = min(max(line, 1), max(len(lines.lines), 1))
    # SyntaxError.offset is a 1-based character offset (0 or None when unknown).
    col = max((exc.offset or 1) - 1, 0)
    end_line = exc.end_lineno or line
    end_col = (exc.end_offset or 0) - 1
    if end_line < line or (end_line == line and end_col <= col):
        end_line, end_col = line, col + 1
    line_len = len(lines.line(line))
    col = min(col, line_len)
    if end_line == line:
        end_col = min(end_col, max(line_len, col))
    return SyntaxErrorInfo(message, line, col, end_line, end_col)
