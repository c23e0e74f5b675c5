"""The edits of "Ignore TLxxx on this line" and "Ignore TLxxx in this file": add the code to the ignore comment
already there, or write a new one (`# tritonlens: ignore[TL127]` at the end of the finding's first line,
`# tritonlens: ignore-file[TL127]` above the file's first statement). Pure: text in, analysis TextEdits out; the
code action feature turns them into a versioned WorkspaceEdit in codeAction/resolve.
"""

from __future__ import annotations

from ...analysis.core.findings import Span, TextEdit
from ...analysis.source.lines import source_lines
from ...analysis.specialize.pragmas import IgnoreComment, comment_lines, ignore_comment_text, ignore_comments

LINE = "line"
FILE = "file"


def _merged(comment: IgnoreComment, code: str) -> TextEdit | None:
    if not comment.codes or any(code.startswith(c) for c in comment.codes):
        return None  # it already silences the code: nothing to add
    text = ignore_comment_text([*comment.codes, code], comment.whole_file)
    return TextEdit(Span(comment.line, comment.col, comment.line, comment.end_col), text)


def line_ignore_edit(text: str, line: int, code: str) -> TextEdit | None:
    """The edit that silences `code` on `line`, or None where no comment can go (a backslash continuation, a
    `# tritonlens:` pragma already ending the line)."""
    lines = source_lines(text)
    if not 1 <= line <= len(lines):
        return None
    for comment in ignore_comments(text):
        if comment.line == line and not comment.whole_file:
            return _merged(comment, code)
    if line in comment_lines(text):
        return None  # a pragma ends this line: a second `# tritonlens:` comment after it would break it
    body = lines[line - 1].rstrip()
    if body.endswith("\\"):
        return None
    end = len(body)
    return TextEdit(Span(line, end, line, len(lines[line - 1])), "  " + ignore_comment_text([code], False))


def file_ignore_edit(text: str, code: str) -> TextEdit | None:
    """The edit that silences `code` in the whole file: into its `ignore-file` comment, or a new one on top
    (below a shebang and an encoding line, which must stay first)."""
    for comment in ignore_comments(text):
        if comment.whole_file:
            return _merged(comment, code)
    lines = source_lines(text)
    at = 1
    while (
        at <= min(len(lines), 2)
        and lines[at - 1].startswith("#")
        and (lines[at - 1].startswith("#!") or "coding" in lines[at - 1])
    ):
        at += 1
    return TextEdit(Span(at, 0, at, 0), ignore_comment_text([code], True) + "\n")
