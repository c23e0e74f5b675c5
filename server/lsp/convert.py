"""Conversions between tritonlens' data model (1-based lines, character columns) and LSP types.

LSP positions are 0-based lines and columns counted in the negotiated encoding (UTF-16 code units unless the
client offered another), so columns are converted against the line's text.
"""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types

from ...analysis.core import rules
from ...analysis.core.findings import Finding, Span, TextEdit
from ...analysis.source.lines import LINE_BREAK
from .documents import finding_key

SOURCE = "tritonlens"
_UTF32 = types.PositionEncodingKind.Utf32.value
_UTF8 = types.PositionEncodingKind.Utf8.value


class Prebuilt(list):  # type: ignore[type-arg]
    """A request result already in JSON form (e.g. thousands of code lens rows): the protocol sends it as it is,
    without converting it object by object on the event loop (lsp_protocol.TritonLensProtocol)."""


class LineText:
    """Splits a document once so many positions can be converted cheaply."""

    def __init__(self, text: str, encoding: str = types.PositionEncodingKind.Utf16) -> None:
        self.lines = LINE_BREAK.split(text)  # LSP's lines: "\r\n", "\r" or "\n", nothing else
        self.encoding = str(getattr(encoding, "value", encoding))  # "utf-8" | "utf-16" | "utf-32"

        # Compared once here: reading an enum member's `.value` per position was most of a large codeLens reply.
        self._utf32 = self.encoding == _UTF32
        self._utf8 = self.encoding == _UTF8
        self._ranges: dict[tuple[int, int, int, int], types.Range] = {}

    def _units(self, s: str) -> int:
        if self._utf32 or s.isascii():
            return len(s)
        if self._utf8:
            return len(s.encode("utf-8", "surrogatepass"))
        return len(s.encode("utf-16-le", "surrogatepass")) // 2

    def _line(self, index: int) -> str:
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    def to_lsp(self, line: int, col: int) -> types.Position:
        """(1-based line, character column) -> LSP position, clamped to the document."""
        index = max(line - 1, 0)
        if index >= len(self.lines):
            index = max(len(self.lines) - 1, 0)
            return types.Position(index, self._units(self._line(index)))
        text = self._line(index)
        return types.Position(index, self._units(text[: max(col, 0)]))

    def from_lsp(self, pos: types.Position) -> tuple[int, int]:
        """LSP position -> (1-based line, character column)."""
        text = self._line(pos.line)
        if self._utf32:
            return pos.line + 1, min(pos.character, len(text))
        units = 0
        for i, ch in enumerate(text):
            if units >= pos.character:
                return pos.line + 1, i
            units += self._units(ch)
        return pos.line + 1, len(text)

    def range(self, span: Span) -> types.Range:
        # Memoised: every lens provider asks for the range of the same kernel name.
        key = (span.line, span.col, span.end_line, span.end_col)
        found = self._ranges.get(key)
        if found is None:
            found = types.Range(self.to_lsp(span.line, span.col), self.to_lsp(span.end_line, span.end_col))
            self._ranges[key] = found
        return found


def _code_description(code: str) -> types.CodeDescription | None:
    rule = rules.get(code)
    if rule is None:
        return None
    for ref in rule.references:
        if ref.startswith(("http://", "https://")):
            return types.CodeDescription(href=ref)
    return None


_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")


def plain_text(markdown: str) -> str:
    """Findings are written in Markdown for hovers; Problems, code action titles and the Kernels view show text
    verbatim, so code spans, links and bold become their plain text there."""
    text = _CODE_SPAN.sub(lambda m: m.group(2).strip(), markdown)
    text = _LINK.sub(r"\1", text)
    return _EMPHASIS.sub(r"\2", text)


def to_diagnostic(f: Finding, lines: LineText, uri: str, version: int) -> types.Diagnostic:
    # `data` carries what code actions need, so they can be listed without recomputing anything.
    data: dict[str, Any] = {"uri": uri, "version": version, "key": finding_key(f), "level": int(f.level)}
    if f.kernel:
        data["kernel"] = f.kernel
    if f.fix is not None:
        data["fix"] = f.fix.title
    return types.Diagnostic(
        range=lines.range(f.span),
        message=plain_text(f.message),
        severity=types.DiagnosticSeverity(int(f.severity)),
        code=f.code,
        code_description=_code_description(f.code),
        source=SOURCE,
        data=data,
    )


def to_text_edit(edit: TextEdit, lines: LineText) -> types.TextEdit:
    return types.TextEdit(range=lines.range(edit.span), new_text=edit.new_text)
