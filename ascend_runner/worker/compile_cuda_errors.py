"""Where a failed CUDA compile points in the buffer: Triton's front-end errors (lines relative to the function's
text) and MLIR/LLVM/ptxas diagnostics (locations, PTX lines) mapped to the request's source lines, as StageError
dicts. Runs inside the CUDA runner environment (stdlib + triton; never imports tritonlens).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from typing import Any

from source_module import LoadedSource

_LOC_RE = re.compile(r'loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)\)')
_PTXAS_LINE_RE = re.compile(r"(?P<file>[^\s:]+\.py), line (?P<line>\d+)")


def stage_error(stage: str, message: str, line: int | None = None, col: int | None = None) -> dict[str, Any]:
    return {"stage": stage, "message": message.strip(), "line": line, "col": col}


def _jit_begin_line(jit_fn: Any) -> int:
    from triton.runtime.jit import get_jit_fn_file_line

    return int(get_jit_fn_file_line(jit_fn)[1])


def frontend_error(exc: BaseException, loaded: LoadedSource) -> dict[str, Any]:
    """Map Triton's CompilationError (line relative to the function's own text) to a buffer line."""
    from triton.compiler.errors import CompilationError
    from triton.runtime.jit import JITFunction

    chain: list[CompilationError] = []
    cur: BaseException | None = exc
    while cur is not None:
        if isinstance(cur, CompilationError):
            chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    if not chain:
        return stage_error("frontend", f"{type(exc).__name__}: {exc}")
    # Only functions written in this buffer: a helper imported from another file has lines of that file.
    path = loaded.module.__file__
    by_src = {
        v.src: v
        for v in loaded.module.__dict__.values()
        if isinstance(v, JITFunction) and v.fn.__code__.co_filename == path
    }

    def place(err: CompilationError) -> tuple[int | None, int | None]:
        node = err.node
        fn = by_src.get(err.src)
        if fn is None or not hasattr(node, "lineno"):
            return None, None
        return _jit_begin_line(fn) + node.lineno - 1, getattr(node, "col_offset", None)

    inner = chain[-1]
    message = inner.error_message or str(inner.__cause__ or "") or type(inner).__name__
    located = [(e, place(e)) for e in chain]
    located = [(e, where) for e, where in located if where[0] is not None]
    if not located:
        return stage_error("frontend", message)
    anchor, (line, col) = located[-1]
    if anchor is not inner:
        message += " (inside a helper defined in another file, called here)"
    else:
        callers = [where[0] for e, where in located[:-1] if e.src != inner.src]
        if callers:
            message += f" (called from line {callers[-1]})"
    return stage_error("frontend", message, line, col)


def diagnostic_error(stage: str, text: str, path: str) -> dict[str, Any]:
    """An MLIR/LLVM/ptxas failure: keep the message, pick the first source location that is in the buffer."""
    line = col = None
    for m in _LOC_RE.finditer(text):
        if m.group("file") == path:
            line, col = int(m.group("line")), int(m.group("col"))
            break
    if line is None:
        for m in _PTXAS_LINE_RE.finditer(text):
            if path.endswith(m.group("file")):
                line = int(m.group("line"))
                break
    return stage_error(stage, text[-4000:], line, col)


def ptx_line_to_source(ptx: str, message: str) -> int | None:
    """ptxas names a PTX line ("... at line 820"); the `.loc` before that line names the source line."""
    m = re.search(r"\bat line (\d+)", message)
    if not m:
        return None
    lines = ptx.splitlines()[: int(m.group(1))]
    for text in reversed(lines):
        loc = re.match(r"\s*\.loc\s+\d+\s+(\d+)\s+\d+", text)
        if loc and int(loc.group(1)) > 0:
            return int(loc.group(1))
    return None


@contextlib.contextmanager
def capture_fd2() -> Any:
    """MLIR prints diagnostics straight to file descriptor 2; collect them to explain a failed pass."""
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        box: dict[str, str] = {}
        try:
            yield box
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            box["text"] = sink.read().decode("utf-8", "replace")
