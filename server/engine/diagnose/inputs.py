"""What the levels 3-4 engine compiles and what each compile reads.

- Which jit functions of a file are compiled on their own (`launchable_kernels`): launched ones and those no other
  jit function calls (helpers are compiled inline into their callers).
- What a compile reads besides the buffer: `[tool.tritonlens]` of the nearest pyproject.toml (per-kernel values)
  and the launches `tritonlens record` stored for the kernel's current text.
- All of it as one digest (`compile_inputs_digest`): the save-time escalation recompiles a kernel when this
  changes, not only when the kernel's own lines do. A kernel's specialization reads its own text and its helpers'
  (compiled inline), the host code around it (launch sites and the values they pass, module constants, imports),
  `# tritonlens:` pragmas anywhere in the file, the pyproject table and the stored launches. Only the bodies of
  the file's other jit functions are left out, so an edit inside another kernel does not recompile this one.
  The kernel's launches in other files of the workspace (workspace_index.py) count too: the digest holds the
  texts of the files that launch it.
  Reads files (pyproject, the launch store): call it off the event loop.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....analysis.kernels import parse_module
from ....analysis.source.lines import source_lines
from ....analysis.specialize.kernels import KernelTable, kernel_table
from ....analysis.specialize.pragmas import comment_lines
from ....analysis.specialize.workspace_launches import ForeignLaunch
from ....analysis.state.session import current
from ..record.launch_store import recorded_for
from .workspace_index import WorkspaceLaunches, launches_elsewhere

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pyproject overrides need 3.11's tomllib
    tomllib = None  # type: ignore[assignment]


# -- which kernels -----------------------------------------------------------------------------------------
def launchable_kernels(source: str, parsed: KernelTable | None = None) -> list[str]:
    """Kernels worth compiling on their own: jit functions that are launched here or called by no other
    jit function (helpers are compiled inlined into their callers)."""
    module = parse_module(source)
    parsed = parsed or kernel_table(module)
    # a jit function only referenced by others (a `tl.reduce` combine function) is compiled inside them
    return [k.name for k in module.kernels if not _helper_only(parsed, k.name, source)]


def callers_of(parsed: KernelTable, kernel: str) -> list[str]:
    return [n for n, other in parsed.kernels.items() if n != kernel and kernel in _names(other.node)]


def _helper_only(parsed: KernelTable, kernel: str, source: str) -> bool:
    """Compiled only inside other jit functions: referenced by one (a `tl.reduce` combine function), or
    returning a value (a device function: a launched kernel cannot return one), and never launched here."""
    if f"{kernel}[" in source:
        return False
    info = parsed.kernels.get(kernel)
    returns = info is not None and any(
        isinstance(n, ast.Return) and n.value is not None for n in ast.walk(info.node)
    )
    return returns or bool(callers_of(parsed, kernel))


def _names(node: Any) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]


# -- what a compile reads besides the buffer -----------------------------------------------------------
def find_pyproject(path: str | Path) -> Path | None:
    """The nearest pyproject.toml at or above the file's folder."""
    try:
        start = Path(path).resolve()
    except (OSError, RuntimeError):
        return None
    for folder in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def find_pyproject_overrides(path: str | Path) -> dict[str, Any]:
    """`[tool.tritonlens]` of the nearest pyproject.toml ({} when absent or unreadable).

    Kernel overrides live under its `kernels` key: {"kernels": {"matmul_kernel": {"BLOCK_M": 128, ...}}}.
    """
    pyproject = find_pyproject(path)
    return dict(pyproject_table(pyproject)) if pyproject is not None else {}  # the cached table stays as read


def pyproject_table(pyproject: Path) -> dict[str, Any]:
    """`[tool.tritonlens]` of one pyproject.toml ({} when unreadable), parsed once per modification of the file
    and kept in the session: ignores read it on every keystroke's analysis."""
    if tomllib is None:
        return {}
    try:
        key = (str(pyproject), pyproject.stat().st_mtime)
    except OSError:
        return {}
    tables = current().pyproject_tables
    hit = tables.get(key)
    if hit is not None:
        return hit
    try:
        raw = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("tritonlens", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        raw = {}
    table = raw if isinstance(raw, dict) else {}
    tables.put(key, table)
    return table


def kernel_overrides(table: Mapping[str, Any] | None, kernel: str) -> dict[str, Any]:
    """The per-kernel table out of `[tool.tritonlens]` (or of its `kernels` sub-table passed directly)."""
    if not table:
        return {}
    kernels = table.get("kernels", table)
    entry = kernels.get(kernel) if isinstance(kernels, Mapping) else None
    return dict(entry) if isinstance(entry, Mapping) else {}


def stored_launches(path: str, source: str, kernel: str | None) -> list[dict[str, Any]]:
    try:
        return recorded_for(path, source, kernel)
    except OSError:  # an unreadable store is no reason to stop the analysis
        return []


def same_file(recorded_file: Any, path: str) -> bool:
    """A recorded launch belongs to this buffer when it names no file or names this one."""
    if not isinstance(recorded_file, str) or not recorded_file:
        return True
    try:
        return os.path.realpath(recorded_file) == os.path.realpath(path)
    except (OSError, ValueError):
        return recorded_file == path


# -- all of it as one digest ------------------------------------------------------------------------------
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


@dataclass(frozen=True)
class CompileInputs:
    """What one compile of a kernel reads besides the buffer, read once, and the digest of all of it."""

    digest: str | None  # None: no such jit function, or no parse
    overrides: dict[str, Any]  # [tool.tritonlens] of the nearest pyproject.toml
    recorded: list[dict[str, Any]]  # launches `tritonlens record` stored for the kernel's current text
    foreign: tuple[ForeignLaunch, ...] = ()  # the kernel's launches in other files of the workspace


def read_compile_inputs(text: str, path: str | None, kernel: str) -> CompileInputs:
    """The pyproject table and stored launches that apply to `path`, and the digest of them with the text: the
    language server takes the digest before a compile and hands the same values to `analyze_kernel`, so one
    escalation reads each file once. No file is read for a kernel that cannot compile (digest None)."""
    base = text_digest(text, kernel)
    if base is None:
        return CompileInputs(None, {}, [])
    overrides: dict[str, Any] = {}
    recorded: list[dict[str, Any]] = []
    elsewhere = WorkspaceLaunches()
    if path:
        overrides = find_pyproject_overrides(path)
        try:
            recorded = recorded_for(path, text, kernel)
        except Exception:  # an unreadable store counts as "no recorded launches", as the compile reads it
            recorded = []
        elsewhere = launches_elsewhere(path, text, kernel)
    extra = json.dumps([overrides, recorded, elsewhere.digest], sort_keys=True, default=str)
    digest = hashlib.blake2b(f"{base}\0{extra}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return CompileInputs(digest, overrides, recorded, elsewhere.launches)


def compile_inputs_digest(text: str, path: str | None, kernel: str) -> str | None:
    """`text_digest` plus the pyproject overrides and recorded launches that apply to `path`."""
    return read_compile_inputs(text, path, kernel).digest


MAX_HELPER_BYTES = 1_000_000
_ANCESTORS = 8  # how far up from the file a top-level package of the workspace is looked for


def module_reader(path: str) -> Callable[[str, int], str | None]:
    """`read(module, level)` for specialization_callees.imported_helpers: the source of a module imported by the
    file at `path`, found as Python would from the file's package (relative imports) or from one of its parent
    folders (absolute imports of the workspace's own packages); None when it is not a workspace file."""
    here = Path(path).resolve().parent

    def read(module: str, level: int) -> str | None:
        parts = [p for p in module.split(".") if p]
        if level:
            bases = [here.parents[level - 2] if level > 1 else here] if level - 1 <= len(here.parents) else []
        else:
            bases = [here, *list(here.parents)[:_ANCESTORS]]
        for base in bases:
            for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
                try:
                    if candidate.is_file() and candidate.stat().st_size <= MAX_HELPER_BYTES:
                        return candidate.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
        return None

    return read
