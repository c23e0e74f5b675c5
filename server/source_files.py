"""Reading Python files from disk as Python does: a BOM or a PEP 263 `# -*- coding: ... -*-` line decides the
encoding (UTF-8 otherwise), so a latin-1 file the interpreter runs is not rejected as undecodable."""

from __future__ import annotations

import io
import os
import tokenize


class UnreadableSource(OSError):
    """The file's bytes are not text in the encoding it declares (or it declares an unknown one)."""


def decode_python_source(data: bytes, name: str = "<file>") -> tuple[str, str]:
    """(text, encoding) of a Python file's bytes; the BOM is not part of the text."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # an unknown codec, or a cookie that contradicts the BOM
        raise UnreadableSource(f"{name}: {exc.msg}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise UnreadableSource(f"{name}: not valid {encoding} text ({exc})") from None
    return (text[1:] if text.startswith("\ufeff") else text), encoding


def read_python_source(path: str | os.PathLike[str]) -> str:
    """The text of a Python file on disk; OSError (UnreadableSource for undecodable text) otherwise."""
    with open(path, "rb") as fh:
        data = fh.read()
    return decode_python_source(data, os.fspath(path))[0]
