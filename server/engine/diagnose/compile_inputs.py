"""What a compile of one kernel reads, as one digest: the save-time escalation recompiles a kernel when this
changes, not only when the kernel's own lines do.

A kernel's specialization reads its own text and its helpers' (compiled inline), the host code around it
(launch sites and the values they pass, module constants, imports), `# tritonlens:` pragmas anywhere in the file,
`[tool.tritonlens]` of the nearest pyproject.toml and the launches `tritonlens record` stored for it. Only the
bodies of the file's other jit functions are left out, so an edit inside another kernel does not recompile this
one. Reads files (pyproject, the launch store): call it off the event loop.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ....analysis.kernels import parse_module
from ....analysis.pragmas import comment_lines
from ....analysis.source_lines import source_lines


def text_digest(text: str, kernel: str) -> str | None:
    """Digest of the file text a compile of `kernel` reads (None: no such jit function, or no parse)."""
    module = parse_module(text)
    own = module.kernel(kernel)
    if module.syntax_error is not None or own is None:
        return None
    keep = {own.name, *own.helpers}
    skipped: set[int] = set()
    for fn in module.functions:
        if fn.name not in keep:
            skipped.update(range(fn.span.line, fn.span.end_line + 1))
    digest = hashlib.blake2b(digest_size=16)
    for n, line in enumerate(source_lines(text), start=1):
        if n not in skipped:
            digest.update(line.encode("utf-8", "surrogatepass") + b"\n")
    for n, (col, comment) in sorted(comment_lines(text).items()):
        digest.update(f"{n}:{col}:{comment}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def compile_inputs_digest(text: str, path: str | None, kernel: str) -> str | None:
    """`text_digest` plus the pyproject overrides and recorded launches that apply to `path`."""
    base = text_digest(text, kernel)
    if base is None:
        return None
    overrides: Any = {}
    recorded: Any = []
    if path:
        from ...launch_store import recorded_for
        from .inputs import find_pyproject_overrides

        overrides = find_pyproject_overrides(path)
        try:
            recorded = recorded_for(path, text, kernel)
        except Exception:  # an unreadable store counts as "no recorded launches", as the compile reads it
            recorded = []
    extra = json.dumps([overrides, recorded], sort_keys=True, default=str)
    return hashlib.blake2b(f"{base}\0{extra}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
