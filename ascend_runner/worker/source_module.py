"""Turn the text of an editor buffer into a live module so its @triton.jit kernels can be compiled.

Runs inside a runner environment (stdlib + that environment's packages; never imports tritonlens).
The buffer runs under a private module name, so `if __name__ == "__main__":` blocks never execute, and
its code objects carry the request's path as file name, so every compiler `loc` points at the user's file.
Top-level statements run one by one: one that fails (say, a device query on a machine with no GPU) is
reported as a warning and skipped, so the kernels below it can still be compiled; a failed import is marked as
such (`"import": True`) so the caller can put it on the import line.

Imports work the way Python does for the file: when its folder is a package (has `__init__.py`), the buffer
runs as a module of that package (`__package__` is the real dotted name, the package root and the workspace
root are on `sys.path`), so `from ..utils import x` and `from .ops import y` resolve as they do for the user. A
package whose `__init__` cannot be imported here (it needs a GPU library, say) is stood in for by bare packages
over the same folders, so the relative imports still find their files.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import importlib.util
import itertools
import linecache
import os
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Any

from init_reexports import bind_reexports
from source_alone import AlonePlan, bare_packages
from stand_ins import standing_in

# Packages that are slow to import and rarely needed to *compile* a kernel: bound lazily, imported for real
# on first attribute access (so a kernel file's top-level `import torch` costs nothing unless used).
LAZY_PACKAGES = ("torch",)
_counter = itertools.count()
# Decided once, before any stand-in finder is on sys.meta_path (it would answer for a missing package too).
_LAZY_INSTALLED = frozenset(p for p in LAZY_PACKAGES if importlib.util.find_spec(p) is not None)


class SourceError(Exception):
    """The buffer cannot yield the requested kernel; carries a 1-based line when one is known."""

    def __init__(self, message: str, line: int | None = None, col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col


@dataclass
class LoadedSource:
    module: types.ModuleType
    warnings: list[dict[str, Any]] = field(default_factory=list)  # {"line", "message"} per skipped statement
    local_modules: list[str] = field(default_factory=list)  # the user's own modules it imported
    stub_packages: list[str] = field(default_factory=list)  # bare packages standing in for unimportable ones
    tree: ast.Module | None = None
    path: str = ""

    def define_nested(self, name: str) -> bool:
        """A kernel defined inside a function (a test, a launcher) is defined again at module level, with its
        decorators, so it can be compiled on its own; its globals are the module's. False when absent."""
        if self.tree is None:
            return False
        nested = [
            node
            for top in self.tree.body
            if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for node in ast.walk(top)
            if isinstance(node, ast.FunctionDef) and node.name == name and node is not top
        ]
        if not nested:
            return False
        code = compile(ast.Module(body=[nested[0]], type_ignores=[]), self.path, "exec")
        try:
            exec(code, self.module.__dict__)
        except Exception as exc:  # noqa: BLE001 - its decorators need something the module lacks
            self.warnings.append({"line": nested[0].lineno, "message": f"nested kernel not defined: {exc}"})
            return False
        return True

    def close(self) -> None:
        # Forget the buffer and the user's sibling modules, so the next job sees their current text.
        sys.modules.pop(self.module.__name__, None)
        if (self.module.__package__ or "").startswith("tritonlens_folder_"):
            sys.modules.pop(self.module.__package__, None)
        for name in [*self.local_modules, *self.stub_packages]:
            sys.modules.pop(name, None)


class _LazyModule(types.ModuleType):
    """Stands for a package not imported yet; the first attribute looked up imports it for real."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


def _lazy_bindings(stmt: ast.stmt) -> dict[str, types.ModuleType] | None:
    """For `import torch` / `import torch as th` of a lazy package not yet loaded: the names to bind."""
    if not isinstance(stmt, ast.Import):
        return None
    bound: dict[str, types.ModuleType] = {}
    for alias in stmt.names:
        if alias.name not in LAZY_PACKAGES or alias.name in sys.modules:
            return None
        if alias.name not in _LAZY_INSTALLED:
            return None  # not installed here: the import runs, and a stand-in takes its place
        bound[alias.asname or alias.name] = _LazyModule(alias.name)
    return bound


def _register_text(path: str, source: str) -> None:
    # inspect.getsourcelines (used by triton.jit) reads through linecache; an mtime of None keeps
    # checkcache() from replacing the buffer text with the (possibly stale or absent) file on disk.
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    linecache.cache[path] = (len(source), None, lines, path)


def _folder_package(folder: str) -> str:
    """A private package whose search path is the buffer's folder, so `from .utils import helper` finds
    <folder>/utils.py as it would for the user; a private name cannot clash with an installed package."""
    name = f"tritonlens_folder_{next(_counter)}"
    package = types.ModuleType(name)
    package.__path__ = [folder]
    package.__package__ = name
    package.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    package.__spec__.submodule_search_locations = [folder]
    sys.modules[name] = package
    return name


_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_UNBOUND = re.compile(
    r"NameError|is not defined|has no attribute|StandIn"
)  # a name the failed imports left out
_DTYPE_CONSTANT = re.compile(r"^(?:tl|triton\.language)\.([A-Za-z_][A-Za-z0-9_]*)$")


def package_of(path: str) -> tuple[str | None, str | None]:
    """(folder to put on sys.path, dotted package name) when the file's folder is a package, else (None, None)."""
    folder = os.path.dirname(os.path.abspath(path))
    parts: list[str] = []
    while os.path.isfile(os.path.join(folder, "__init__.py")) and len(parts) < 32:
        parts.append(os.path.basename(folder))
        folder = os.path.dirname(folder)
    # A package whose top name is an installed module (a library's `.../kernel/triton/` under a namespace folder
    # without `__init__`) would shadow it (`import triton.language` then fails): the namespace folders above are
    # part of its name, as Python 3 resolves them from the workspace root.
    while parts and _shadows_installed(parts[-1], folder) and os.path.basename(folder).isidentifier():
        parts.append(os.path.basename(folder))
        folder = os.path.dirname(folder)
    if not parts or not all(p.isidentifier() for p in parts):
        return None, None
    return folder, ".".join(reversed(parts))


def _shadows_installed(top: str, folder: str) -> bool:
    """`top` is importable from somewhere other than `folder` (an installed module a root there would hide)."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    where = spec.origin or next(iter(spec.submodule_search_locations or []), "") if spec else ""
    return bool(where) and not os.path.abspath(where).startswith(os.path.abspath(folder) + os.sep)


def workspace_root(path: str) -> str | None:
    """The nearest folder at or above the file's that holds a project marker (pyproject.toml, .git, ...)."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        if any(os.path.exists(os.path.join(folder, m)) for m in _ROOT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def import_roots(path: str) -> list[str]:
    """sys.path entries the file's imports need ahead of the installed packages, in Python's order: its folder
    (as `python file.py` would) unless the file is a module of a package, the package root, the workspace root.

    A package's module is imported through its package, so Python never puts its own folder first: a sibling
    `torch.py` there must not hide the installed torch (sibling_fallback puts that folder after them)."""
    folder = os.path.dirname(os.path.abspath(path))
    root, _ = package_of(path)
    out = [] if root else [folder]
    for extra in (root, workspace_root(path)):
        if extra and extra not in out and os.path.isdir(extra):
            out.append(extra)
    return out


def sibling_fallback(path: str) -> str | None:
    """The folder of a package's module, for the end of sys.path: a bare `import helper` of a sibling still
    resolves (as in the scripts such folders hold), after every installed package."""
    return os.path.dirname(os.path.abspath(path)) if package_of(path)[0] else None


def _enter_package(package: str, root: str, created: list[str]) -> str | None:
    """Import the real package (its `__init__` runs, as for the user); when that fails, stand in bare packages
    over the same folders. Returns the import error, if any. Refuses a name already imported from elsewhere."""
    top = package.split(".")[0]
    loaded = sys.modules.get(top)
    if loaded is not None:
        where = [os.path.abspath(p) for p in getattr(loaded, "__path__", []) or []]
        if os.path.join(root, top) not in where:
            return f"a different {top!r} is already imported"
    try:
        importlib.import_module(package)
        return None
    except Exception as exc:  # noqa: BLE001 - any failure of the user's __init__: stand in and say why
        error = f"{type(exc).__name__}: {exc}"
    folder = root
    parts = package.split(".")
    for i, part in enumerate(parts):
        folder = os.path.join(folder, part)
        name = ".".join(parts[: i + 1])
        existing = sys.modules.get(name)
        if existing is not None and getattr(existing, "__path__", None):
            continue
        stub = types.ModuleType(name)
        stub.__path__ = [folder]
        stub.__package__ = name
        stub.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        stub.__spec__.submodule_search_locations = [folder]
        bind_reexports(stub, os.path.join(folder, "__init__.py"))
        sys.modules[name] = stub
        created.append(name)
    return error


def decode_constants(constants: dict[str, Any]) -> dict[str, Any]:
    """Constexpr values as the kernel expects them: `"tl.float16"` / `"triton.language.float16"` is the dtype."""
    out = dict(constants)
    for name, value in constants.items():
        match = _DTYPE_CONSTANT.match(value) if isinstance(value, str) else None
        if match:
            import triton.language as tl

            dtype = getattr(tl, match.group(1), None)
            if isinstance(dtype, tl.dtype):
                out[name] = dtype
    return out


def _installed(file: str) -> bool:
    """A module of an environment (its prefix may sit inside the workspace, e.g. a `.venv`): never the
    user's own, never forgotten between jobs (re-importing torch in one process breaks it)."""
    prefixes = {os.path.realpath(p) + os.sep for p in (sys.prefix, sys.exec_prefix, sys.base_prefix)}
    real = os.path.realpath(file)
    parts = real.split(os.sep)
    return real.startswith(tuple(prefixes)) or "site-packages" in parts or "dist-packages" in parts


def _report_stand_ins(loaded: LoadedSource, stood: list[str], seen: int, line: int) -> None:
    for name in stood[seen:]:
        loaded.warnings.append(
            {
                "line": line,
                "message": f"module {name} is not installed in this runner environment: a stand-in took its "
                "place so the file could load (a kernel that uses it will not compile)",
                "import": True,
                "stand_in": name,
            }
        )


def _is_import(stmt: ast.stmt) -> bool:
    return any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in ast.walk(stmt))


def parse_source(source: str, path: str) -> ast.Module:
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise SourceError(f"syntax error: {exc.msg}", exc.lineno, (exc.offset or 1) - 1) from None


def load_source(
    source: str, path: str, job_folder: str | None = None, alone: AlonePlan | None = None
) -> LoadedSource:
    """Execute `source` as a fresh module whose code claims to come from `path`.

    job_folder: a runner service's job folder holding the modules the client uploaded; the buffer's imports
    then resolve there only (never in folders of the runner host that `path` happens to name).
    alone: run only these statements, with the workspace's packages entered without their `__init__`
    (`source_alone.plan_alone`: the kernel built from the file's own source)."""
    tree = parse_source(source, path)
    _register_text(path, source)
    name = f"tritonlens_buffer_{next(_counter)}"
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module  # dataclasses, inspect.getmodule and pickling look modules up here
    loaded = LoadedSource(module, tree=tree, path=path)
    folder = os.path.abspath(job_folder) if job_folder else os.path.dirname(os.path.abspath(path))
    # Sibling imports (`from utils import helper`), package and workspace imports resolve as for the user.
    roots = [folder] if job_folder else import_roots(path)
    added = [p for p in roots if os.path.isdir(p) and p not in sys.path]
    sys.path[:0] = added
    fallback = None if job_folder else sibling_fallback(path)
    if fallback and fallback not in sys.path:
        sys.path.append(fallback)
        added.append(fallback)
    before = set(sys.modules)
    stand_ins = standing_in()
    stood = stand_ins.__enter__()
    bare = bare_packages(roots, _installed) if alone is not None else None
    if bare is not None:
        bare.__enter__()
    root, package = (None, None) if job_folder else package_of(path)
    package_error = None
    if package and root and alone is not None:
        try:
            importlib.import_module(package)  # bare packages: no __init__ runs
        except Exception as exc:  # noqa: BLE001 - a clash with an installed package of the same name
            package_error = f"{type(exc).__name__}: {exc}"
    elif package and root:
        package_error = _enter_package(package, root, loaded.stub_packages)
    _report_stand_ins(loaded, stood, 0, 1)
    if package and root and package_error is None or loaded.stub_packages:
        module.__package__ = package
    elif os.path.isdir(folder):
        module.__package__ = _folder_package(folder)
    if package_error and loaded.stub_packages:
        loaded.warnings.append(
            {
                "line": 1,
                "message": f"package {package} could not be imported here ({package_error}); "
                "its folders stand in so relative imports still resolve",
                "import": True,
                "package": True,
            }
        )
    # No __pycache__ written into the user's folder by a compile.
    saved_bytecode_flag, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        for stmt in tree.body if alone is None else alone.statements:
            lazy = _lazy_bindings(stmt)
            if lazy is not None:
                module.__dict__.update(lazy)
                continue
            code = compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec")
            seen = len(stood)
            try:
                exec(code, module.__dict__)
                _report_stand_ins(loaded, stood, seen, stmt.lineno)
            except (Exception, SystemExit) as exc:
                _report_stand_ins(loaded, stood, seen, stmt.lineno)
                loaded.warnings.append(
                    {
                        "line": stmt.lineno,
                        "message": f"top-level statement skipped: {type(exc).__name__}: {exc}",
                        "import": _is_import(stmt),
                    }
                )
    finally:
        if bare is not None:
            bare.__exit__(None, None, None)
        stand_ins.__exit__(None, None, None)
        sys.dont_write_bytecode = saved_bytecode_flag
        for entry in added:
            if entry in sys.path:
                sys.path.remove(entry)
        local = tuple(p + os.sep for p in added + [folder])
        for imported in set(sys.modules) - before:
            file = getattr(sys.modules.get(imported), "__file__", None) or ""
            if file.startswith(local) and not _installed(file):
                loaded.local_modules.append(imported)
    return loaded


def find_jit(namespace: dict[str, Any], name: str, jit_class: type) -> Any:
    """The jit function called `name`: bound to that name (through autotune/heuristics wrappers), or bound to
    another name by `other = triton.jit(name)` (the function keeps its own `__name__`). None when absent."""

    def unwrap(obj: Any) -> Any:
        for _ in range(8):  # Autotuner / Heuristics keep the wrapped function in .fn
            try:
                if obj is None or isinstance(obj, jit_class) or not hasattr(obj, "fn"):
                    break
                obj = obj.fn
            except Exception:  # noqa: BLE001 - a lazy module that cannot import, an odd object: not a kernel
                return None
        return obj if isinstance(obj, jit_class) else None

    found = unwrap(namespace.get(name))
    if found is not None:
        return found
    for value in list(namespace.values()):
        candidate = unwrap(value)
        if candidate is not None and getattr(candidate.fn, "__name__", None) == name:
            return candidate
    return None


def needs_alone(loaded: LoadedSource, errors: list[dict[str, Any]], kernel: str = "") -> bool:
    """The front end failed after a top-level statement of the file failed (an import that probes a device or
    a vendor backend, a vendor decorator), or the kernel is missing because a module-level guard
    (`if has_triton():`, `try:`) hid it on this runner: the kernel is worth building from the file's source
    alone."""
    if not errors or any(e.get("stage") != "frontend" for e in errors):
        return False
    if not loaded.warnings:
        return bool(kernel) and kernel_missing(errors) and _hidden_by_guard(loaded, kernel) is not None
    text = "\n".join(str(e.get("message", "")) for e in errors)
    return kernel_missing(errors) or bool(_UNBOUND.search(text))


def load_alone(
    first: LoadedSource, source: str, kernel: str, job_folder: str | None
) -> tuple[LoadedSource, dict[str, Any]] | None:
    """(the kernel's statements loaded from the file's source alone, the label every finding carries);
    None when the kernel is no top-level def of the file."""
    from source_alone import describe, guard_text, plan_alone

    plan = plan_alone(first.tree or parse_source(source, first.path), kernel)
    if plan is None:
        return None
    why = next((w for w in first.warnings if w.get("package")), None) or next(
        (w for w in first.warnings if w.get("import")), first.warnings[0] if first.warnings else {}
    )
    reason = str(why.get("message", "")).replace("top-level statement skipped: ", "")
    reason = f"line {why.get('line')}: {reason}" if why.get("line") else reason
    guard = _hidden_by_guard(first, kernel)
    if guard is not None:  # said even when an import failed too: the guard is why the def did not run
        hidden = f"the kernel is defined under {guard_text(guard)}, which did not define it in this runner"
        reason = f"{hidden}; {reason}" if reason else hidden
    alone = load_source(source, first.path, job_folder, alone=plan)
    return alone, describe(plan, reason[:300])


def _hidden_by_guard(loaded: LoadedSource, kernel: str) -> ast.stmt | None:
    """The module-level `if`/`try` that defines `kernel`, when the load left the kernel undefined."""
    from source_alone import guard_of

    if loaded.tree is None or not kernel:
        return None
    try:
        from triton.runtime.jit import JITFunction

        if find_jit(loaded.module.__dict__, kernel, JITFunction) is not None:
            return None  # the guard let it through: something else failed
    except ImportError:
        pass
    return guard_of(loaded.tree, kernel)


def merged_warnings(first: LoadedSource, alone: LoadedSource) -> list[dict[str, Any]]:
    """The failed imports of the real load (the user's import lines) and those of the source-alone load."""
    seen: set[int] = set()
    out: list[dict[str, Any]] = []
    for warning in [*first.warnings, *alone.warnings]:
        if warning.get("line") not in seen:
            seen.add(warning.get("line"))
            out.append(warning)
    return out


def kernel_missing(errors: list[dict[str, Any]]) -> bool:
    return any(str(e.get("message", "")).startswith("no @triton.jit function named") for e in errors)
