"""Load what a harness names: a module from a file (or the editor's unsaved text), a script, an entry point.

Triton's JIT reads a kernel's source with `inspect.getsource`, so buffer text is registered in `linecache` under
the user's path: kernels compile from the text the user sees and line numbers match the editor.
Stdlib only (no tritonlens).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import linecache
import os
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

from source_module import import_roots, package_of, sibling_fallback

_counter = 0


class HarnessError(Exception):
    """The harness itself is unusable (missing file, missing Model, syntax error): a plain message for the user."""


def read_source(path: str, source: str | None) -> str:
    if source is not None:
        return source
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"cannot read {path}: {exc}") from None


def _register_lines(path: str, text: str) -> None:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    # mtime None: linecache.checkcache never evicts the entry, even if the file on disk differs.
    linecache.cache[path] = (len(text), None, lines, path)


# The folder a job's imports resolve in: a runner service's job folder (its uploaded modules), set by run_job
# for the job's duration; None: the folder of the harness's path, as `python path` would.
import_folder: str | None = None


@contextlib.contextmanager
def _import_context(path: str, argv: list[str] | None = None) -> Iterator[None]:
    """Imports resolve as Python resolves them for the file: its folder, and when that is a package the package
    root and the workspace root (`from mylib.util import x` in mylib/ops.py, or in the gate's copy of it)."""
    folder = os.path.abspath(import_folder) if import_folder else os.path.dirname(os.path.abspath(path))
    old_path, old_argv = list(sys.path), list(sys.argv)
    roots = import_roots(path)
    sys.path[0:0] = ([folder] if import_folder or folder in roots else []) + [r for r in roots if r != folder]
    fallback = sibling_fallback(path)
    if fallback and not import_folder:
        sys.path.append(fallback)
    if argv is not None:
        sys.argv = [path, *argv]
    try:
        yield
    finally:
        sys.path[:], sys.argv[:] = old_path, old_argv


@contextlib.contextmanager
def job_imports(path: str, folder: str | None) -> Iterator[None]:
    """For one job: imports resolve in `folder` (else the folder of `path`); the user's own modules it
    imported are forgotten afterwards, so the next job reads them again (they may have changed, and a job
    folder is deleted with its job)."""
    global import_folder
    import_folder = folder or None
    root = os.path.abspath(folder) if folder else os.path.dirname(os.path.abspath(path))
    before = set(sys.modules)
    installed = _installed_roots()
    try:
        yield
    finally:
        import_folder = None
        for name in set(sys.modules) - before:
            file = getattr(sys.modules.get(name), "__file__", None) or ""
            if file.startswith(root + os.sep) and not file.startswith(installed):
                sys.modules.pop(name, None)


def _installed_roots() -> tuple[str, ...]:
    """Where this interpreter's own packages live. A project's `.venv` often sits inside the folder of the file a
    job runs: torch's submodules imported during the job are not the user's, and forgetting them makes the next
    import run their C extensions' module init again, which fails in confusing ways."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    roots |= {p for p in sys.path if os.path.basename(p.rstrip(os.sep)) in ("site-packages", "dist-packages")}
    return tuple(os.path.abspath(r) + os.sep for r in roots if r)


def _compile(path: str, text: str) -> types.CodeType:
    try:
        return compile(text, path, "exec")
    except SyntaxError as exc:
        raise HarnessError(f"{path}:{exc.lineno}:{exc.offset or 0}: syntax error: {exc.msg}") from None


def load_module(path: str, source: str | None = None, run_name: str | None = None) -> types.ModuleType:
    """Execute the file as a fresh module (not __main__, so its `if __name__ == "__main__"` block is skipped)."""
    global _counter
    text = read_source(path, source)
    code = _compile(path, text)
    _counter += 1
    name = run_name or f"_tritonlens_harness_{_counter}"
    module = types.ModuleType(name)
    module.__file__ = os.path.abspath(path) if os.path.exists(path) else path
    _, package = package_of(path)
    if package:  # relative imports (`from .utils import x`) resolve in the file's package
        module.__package__ = package
    _register_lines(path, text)
    sys.modules[name] = module  # dataclasses, pickling and Triton look modules up by name
    with _import_context(path):
        exec(code, module.__dict__)
    return module


def run_script(path: str, source: str | None, argv: list[str]) -> None:
    """Run the file as __main__, as `python path argv...` would (SystemExit(0) counts as success)."""
    text = read_source(path, source)
    code = _compile(path, text)
    _register_lines(path, text)
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__dict__["__builtins__"] = __builtins__
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        with _import_context(path, argv):
            exec(code, main.__dict__)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise HarnessError(f"{path} exited with status {exc.code}") from None
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def resolve_entry(path: str, source: str | None, entry: str) -> Callable[[], Any]:
    """`pkg.mod:func` imports a module (the file's folder on sys.path); `:func` or `func` is in the file itself."""
    module_name, sep, func_name = entry.rpartition(":")
    if not sep:
        module_name, func_name = "", entry
    if not func_name.isidentifier():
        raise HarnessError(f"entry {entry!r} does not name a function (use module:function)")
    if module_name:
        with _import_context(path):
            try:
                module = importlib.import_module(module_name)
            except Exception as exc:
                raise HarnessError(f"cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    else:
        module = load_module(path, source)
    func = getattr(module, func_name, None)
    if not callable(func):
        raise HarnessError(f"{module.__name__} has no function {func_name!r}")
    return func


def find_kernel(module: types.ModuleType, name: str) -> Any:
    """The JITFunction (or interpreted function) called `name` in a module, unwrapping autotune/heuristics."""
    obj = getattr(module, name, None)
    for _ in range(5):  # Autotuner and Heuristics keep the wrapped kernel in .fn
        inner = getattr(obj, "fn", None)
        if inner is None or not hasattr(inner, "run"):
            break
        obj = inner
    if obj is None or not hasattr(obj, "run"):
        raise HarnessError(
            f"no Triton kernel named {name!r} in {getattr(module, '__file__', module.__name__)}"
        )
    return obj


def kernel_of_launch(path: str, source: str | None, rec: dict[str, Any]) -> Any:
    """The kernel of a recorded launch: from the harness file, or, when the harness launched a library's kernel
    (a script calling a package's ops), from the module that defines it, imported as the program imported it."""
    here = os.path.abspath(path)
    module_name = rec.get("module")
    if not module_name or os.path.abspath(rec.get("file") or here) == here:
        return find_kernel(load_module(path, source), rec["kernel"])
    with _import_context(path):
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise HarnessError(
                f"cannot import {module_name} (where {rec['kernel']} is defined): {type(exc).__name__}: {exc}"
            ) from None
    return find_kernel(module, rec["kernel"])


@contextlib.contextmanager
def captured_output(limit: int = 4000) -> Iterator[io.StringIO]:
    """Keep what the harness prints off the worker's stdout (which carries the JSON protocol)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        yield buffer


def tail(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]
