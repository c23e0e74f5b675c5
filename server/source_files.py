"""Reading Python files from disk as Python does: a BOM or a PEP 263 `# -*- coding: ... -*-` line decides the
encoding (UTF-8 otherwise), so a latin-1 file the interpreter runs is not rejected as undecodable."""

from __future__ import annotations

import io
import os
import stat
import tokenize

MAX_SOURCE_BYTES = 32 << 20  # a bigger .py is generated data, not a kernel to read on every keystroke


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


def read_regular_file(path: str | os.PathLike[str], max_bytes: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of a regular file of at most `max_bytes`; UnreadableSource otherwise. A FIFO, a device
    (`/dev/zero`), a socket or a folder, also behind a symlink, is refused without reading: a FIFO blocked the
    read forever and a device filled memory."""
    name = os.fspath(path)
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens at once instead of waiting for a writer
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a pipe, device or socket)"
        raise UnreadableSource(f"{name}: {kind}")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UnreadableSource(f"{name}: larger than {max_bytes // (1 << 20)} MiB, not read as source")
    return data


def read_python_source(path: str | os.PathLike[str]) -> str:
    """The text of a Python file on disk; OSError (UnreadableSource for undecodable text or a file that is not a
    regular file of a sane size) otherwise."""
    return decode_python_source(read_regular_file(path), os.fspath(path))[0]
