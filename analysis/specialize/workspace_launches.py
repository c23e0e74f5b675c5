"""Launch sites of a kernel in the other files of the workspace: the wrapper module that imports the kernel
(`from .kernels import my_kernel [as k]`, `import pkg.kernels as m; m.my_kernel[grid](...)`, `from pkg import
my_kernel` re-exported by `pkg/__init__.py`, `from .kernels import *`) and launches it there.

Each launch is read with the same reader as a launch in the kernel's own file (scope.find_launches in the
launching file's own scope, then facts.launch_facts), so its literals, module constants, tensors' dtypes and
the wrapper's callers count the same way. Imports are resolved as Python would, from the launching file's
package (relative imports) or one of its parent folders (absolute imports), among the files given.

Pure: the caller (server/engine/diagnose/workspace_index.py) reads the files and passes their texts, keyed by
workspace-relative posix paths; `parse` lets it keep parsed trees between calls. Never raises on user text.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from ..source.safe_eval import dotted_name
from .scope import Launch, find_launches, index_calls

MAX_LAUNCHING_FILES = 8  # files whose launches are read, nearest to the kernel's file first
MAX_FOREIGN_LAUNCHES = 8
MAX_REEXPORT_DEPTH = 4  # `__init__` re-exporting a re-export ...
_ALIAS_ROUNDS = 3  # rounds of `import k as alias` followed when choosing which files to read

Parse = Callable[[str, str], "ast.Module | None"]  # (path, text) -> tree, None when it does not parse


@dataclass(frozen=True)
class ForeignLaunch:
    """One launch of the kernel in another file, with the scope it runs in there."""

    path: str  # workspace-relative posix path of the launching file
    launch: Launch

    @property
    def where(self) -> str:
        return f"{self.path}:{self.launch.line}"

    @property
    def label(self) -> str:
        return f"launch at {self.where}"


@dataclass
class _Bindings:
    """What the imports of one file bind: local name -> (file, attribute) for names, local (dotted) name -> file
    for modules, and the files of `from X import *`."""

    names: dict[str, tuple[str, str]] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)


def module_file(importer: str, module: str | None, level: int, files: Collection[str]) -> str | None:
    """The file among `files` that `import`/`from ... import` in `importer` loads (`.py` or package
    `__init__.py`), as Python finds it from the importer's package or from a parent folder on the path."""
    parts = [p for p in (module or "").split(".") if p]
    folder = [p for p in importer.split("/")[:-1] if p not in ("", ".")]
    if level:
        if level - 1 > len(folder):
            return None
        bases = [folder[: len(folder) - (level - 1)]]
    else:
        if not parts:
            return None
        bases = [folder[:n] for n in range(len(folder), -1, -1)]  # the importer's folder, then each parent
    for base in bases:
        stem = "/".join([*base, *parts])
        prefix = f"{stem}/" if stem else ""
        candidates = [f"{prefix}__init__.py"] if not parts else [f"{stem}.py", f"{prefix}__init__.py"]
        for candidate in candidates:
            if candidate in files:
                return candidate
    return None


Imports = tuple[tuple[bool, "str | None", int, str, "str | None"], ...]  # (from, module, level, name, as)
ImportsOf = Callable[[str, str], "Imports | None"]  # (path, text) -> its imports, None when it does not parse


def import_statements(tree: ast.Module) -> Imports:
    """Every import of the module, functions' included (a wrapper importing lazily counts): small enough for a
    caller to keep per file text instead of the tree."""
    out: list[tuple[bool, str | None, int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((False, None, 0, a.name, a.asname) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.extend((True, node.module, node.level, a.name, a.asname) for a in node.names)
    return tuple(out)


def _bindings(path: str, imports: Imports, files: Collection[str]) -> _Bindings:
    out = _Bindings()
    for is_from, module, level, name, asname in imports:
        if not is_from:
            target = module_file(path, name, 0, files)
            if target is not None:
                out.modules[asname or name] = target
            continue
        source = module_file(path, module, level, files)
        if name == "*":
            if source is not None:
                out.stars.append(source)
            continue
        local = asname or name
        submodule = module_file(path, f"{module}.{name}" if module else name, level, files)
        if submodule is not None:
            out.modules[local] = submodule
        elif source is not None:
            out.names[local] = (source, name)
    return out


class _Resolver:
    """Which names of which files are the kernel, through imports and re-exports (each file parsed once)."""

    def __init__(
        self, texts: Mapping[str, str], parse: Parse, imports_of: ImportsOf, kernel_path: str, kernel: str
    ) -> None:
        self.texts, self.parse, self.imports_of = texts, parse, imports_of
        self.kernel_path, self.kernel = kernel_path, kernel
        self._bound: dict[str, _Bindings | None] = {}

    def bindings(self, path: str) -> _Bindings | None:
        if path not in self._bound:
            text = self.texts.get(path)
            imports = self.imports_of(path, text) if text is not None else None
            self._bound[path] = _bindings(path, imports, self.texts.keys()) if imports is not None else None
        return self._bound[path]

    def is_kernel(self, path: str, name: str, depth: int = 0) -> bool:
        """`name` in module `path` is the kernel: defined there, or imported / re-exported from where it is."""
        if path == self.kernel_path:
            return name == self.kernel
        bound = self.bindings(path) if depth <= MAX_REEXPORT_DEPTH else None
        if bound is None:
            return False
        if name in bound.names:
            source, attr = bound.names[name]
            return self.is_kernel(source, attr, depth + 1)
        return any(self.is_kernel(star, name, depth + 1) for star in bound.stars)


def _launched(call: ast.Call) -> ast.expr | None:
    """The launched object of `k[grid](...)` or `k.warmup(...)`."""
    func = call.func
    if isinstance(func, ast.Subscript):
        return func.value
    if isinstance(func, ast.Attribute) and func.attr == "warmup":
        return func.value
    return None


def _names_in(text: str, names: Collection[str]) -> bool:
    """A substring test (fast on megabytes): a prefilter, the imports and launches decide."""
    return any(n in text for n in names)


def _names_to_follow(texts: Mapping[str, str], resolver: _Resolver, kernel: str) -> set[str]:
    """The kernel's name and the aliases imports give it (`from .k import kernel as fast`), a few rounds deep:
    only files naming one of them can launch it."""
    names = {kernel}
    for _ in range(_ALIAS_ROUNDS):
        grown = set(names)
        for path, text in texts.items():
            # the kernel's own file defines it (its launches are read with the file): never parsed again here
            if path == resolver.kernel_path or " as " not in text or not _names_in(text, names):
                continue
            bound = resolver.bindings(path)
            for local, (_source, attr) in (bound.names.items() if bound else ()):
                if attr in names:
                    grown.add(local)
        if grown == names:
            break
        names = grown
    return names


def _distance(a: str, b: str) -> int:
    pa, pb = a.split("/")[:-1], b.split("/")[:-1]
    common = 0
    for x, y in zip(pa, pb, strict=False):
        if x != y:
            break
        common += 1
    return len(pa) + len(pb) - 2 * common


def foreign_launches(
    texts: Mapping[str, str],
    kernel_path: str,
    kernel: str,
    parse: Parse | None = None,
    imports_of: ImportsOf | None = None,
) -> list[ForeignLaunch]:
    """Launches of `kernel` (defined in `kernel_path`) in the other files of `texts` (workspace-relative posix
    path -> text), nearest files first, at most MAX_FOREIGN_LAUNCHES from MAX_LAUNCHING_FILES files. `parse`
    and `imports_of` let a caller keep trees and import lists between calls (both parse afresh by default)."""
    parse = parse or _parse
    resolver = _Resolver(texts, parse, imports_of or _imports_of(parse), kernel_path, kernel)
    names = _names_to_follow(texts, resolver, kernel)
    candidates = sorted(
        (
            p
            for p, text in texts.items()
            if p != kernel_path and _names_in(text, names) and ("](" in text or ".warmup(" in text)
        ),
        key=lambda p: (_distance(p, kernel_path), p),
    )
    out: list[ForeignLaunch] = []
    used = 0
    for path in candidates:
        if used >= MAX_LAUNCHING_FILES or len(out) >= MAX_FOREIGN_LAUNCHES:
            break
        found = _launches_in(path, texts[path], resolver, names)
        if found:
            used += 1
            out.extend(found[: MAX_FOREIGN_LAUNCHES - len(out)])
    return out


def _launches_in(path: str, text: str, resolver: _Resolver, names: set[str]) -> list[ForeignLaunch]:
    tree = resolver.parse(path, text)
    bound = resolver.bindings(path)
    if tree is None or bound is None:
        return []
    index = index_calls(tree)
    out: list[ForeignLaunch] = []
    for key in sorted(index.launches.keys() & names):
        for launch in find_launches(index, key):
            target = _launched(launch.call)
            if target is not None and _is_kernel_ref(target, path, bound, resolver):
                out.append(ForeignLaunch(path, launch))
    return sorted(out, key=lambda f: f.launch.line)


def _is_kernel_ref(target: ast.expr, path: str, bound: _Bindings, resolver: _Resolver) -> bool:
    """`target` (what is launched) is the kernel: a name the file's imports bind to it, or `module.name` of a
    module alias whose attribute is the kernel. A name the file itself rebinds to its own function is not."""
    if isinstance(target, ast.Name):
        if target.id in bound.names:
            source, attr = bound.names[target.id]
            return resolver.is_kernel(source, attr)
        return any(resolver.is_kernel(star, target.id) for star in bound.stars)
    if isinstance(target, ast.Attribute):
        owner = dotted_name(target.value)
        module = bound.modules.get(owner) if owner else None
        return module is not None and resolver.is_kernel(module, target.attr)
    return False


def _imports_of(parse: Parse) -> ImportsOf:
    def imports_of(path: str, text: str) -> Imports | None:
        tree = parse(path, text)
        return import_statements(tree) if tree is not None else None

    return imports_of


def _parse(_path: str, text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
