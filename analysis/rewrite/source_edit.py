"""Text edits over a Python source at AST positions, leaving every other byte of the file as it was.

Recipes rewrite a kernel by replacing the exact source ranges of AST nodes or whole statements; the rest of the
file (comments, formatting, other kernels) is copied unchanged. `ast` reports UTF-8 byte columns; they are
converted to character offsets here.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True)
class Edit:
    start: int  # character offset into the source
    end: int
    text: str


class SourceText:
    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = _LINE.findall(source)  # the same line breaks as the Python tokenizer
        self._starts = [0]
        for line in self.lines:
            self._starts.append(self._starts[-1] + len(line))

    def offset(self, lineno: int, col_bytes: int) -> int:
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        chars = len(line.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))
        return self._starts[lineno - 1] + chars

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)

    def text(self, node: ast.AST) -> str:
        return self.source[self.start(node) : self.end(node)]

    def line_start(self, lineno: int) -> int:
        return self._starts[lineno - 1]

    def line_end(self, lineno: int) -> int:
        """Offset just after the line's newline (or the end of the file)."""
        return self._starts[min(lineno, len(self.lines))]

    def indent(self, node: ast.AST) -> str:
        line = self.lines[node.lineno - 1]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def statement_lines(self, first: ast.stmt, last: ast.stmt | None = None) -> tuple[int, int]:
        """The whole lines a run of statements occupies (comments above them excluded)."""
        last = last or first
        return self.line_start(first.lineno), self.line_end(last.end_lineno)

    def replace(self, node: ast.AST, text: str) -> Edit:
        return Edit(self.start(node), self.end(node), text)

    def replace_statements(self, first: ast.stmt, text: str, last: ast.stmt | None = None) -> Edit:
        start, end = self.statement_lines(first, last)
        return Edit(start, end, text)

    def insert_before(self, stmt: ast.stmt, text: str) -> Edit:
        at = self.line_start(stmt.lineno)
        return Edit(at, at, text)

    def insert_after(self, stmt: ast.stmt, text: str) -> Edit:
        at = self.line_end(stmt.end_lineno)
        prefix = "" if self.source[:at].endswith("\n") else "\n"
        return Edit(at, at, prefix + text)


def apply_edits(source: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits; insertions at the same offset keep their order.

    Edit texts are written with "\n"; in a file that uses "\r\n" they get its line breaks."""
    newline = "\r\n" if "\r\n" in source else "\n"
    ordered = sorted(enumerate(edits), key=lambda item: (item[1].start, item[1].end, item[0]))
    out: list[str] = []
    cursor = 0
    for _, edit in ordered:
        if edit.start < cursor:
            raise ValueError("overlapping edits")
        out.append(source[cursor : edit.start])
        out.append(edit.text.replace("\r\n", "\n").replace("\n", newline))
        cursor = edit.end
    out.append(source[cursor:])
    return "".join(out)


def reindent(text: str, old: str, new: str) -> str:
    """Move a block of lines that all start with `old` to indentation `new` (blank lines stay blank)."""
    out = []
    for line in _LINE.findall(text):  # Python's lines: a form feed or U+2028 inside a line stays in it
        if not line.strip():
            out.append(line)
        elif line.startswith(old):
            out.append(new + line[len(old) :])
        else:
            raise ValueError("inconsistent indentation")
    return "".join(out)
