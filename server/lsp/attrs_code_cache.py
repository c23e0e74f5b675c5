"""The compiled code of the methods attrs generates for lsprotocol's classes, kept on disk between server starts.

attrs writes each class's `__init__`, `__eq__`, `__repr__`, ... as Python source and compiles it when the class is
created: importing `lsprotocol.types` (about 570 classes) compiles about 760 such scripts, roughly 100 ms of CPU at
every server start, before `initialize` can be answered (issue 23). The same source and file name always compile to
the same code, so the code objects are kept (marshal, keyed by a hash of both, one file per Python build and attrs
install) and evaluated as attrs would evaluate a fresh compile; a script not in the file is compiled as before.

Anything unexpected (an attrs without this hook or with another signature, an unreadable or corrupt file) leaves
attrs as it is: the cache can only make the start faster, never break it. `TRITONLENS_NO_CODE_CACHE=1` turns it off.
Only `tritonlens serve` installs it, before anything imports lsprotocol.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

log = logging.getLogger(__name__)

# The hook replaced, with the parameter names it has in attrs 22-26: (script, globs, locs=None, filename="").
HOOK = "_compile_and_eval"
HOOK_PARAMETERS = ("script", "globs", "locs", "filename")
# A start that compiles more scripts than this rewrites the file (a few differ per process: never rewritten for them).
REWRITE_AFTER_MISSES = 16


def cache_file(cache_dir: Path | None = None) -> Path | None:
    """Where the code for this Python build and this attrs install is kept; None if attrs is not importable."""
    try:
        import attr._make as attrs_make
    except ImportError:
        return None
    try:
        stat = os.stat(attrs_make.__file__)
    except OSError:
        return None
    build = f"{sys.implementation.cache_tag}-{sys.version.split()[0]}-{stat.st_size}-{stat.st_mtime_ns}"
    name = f"attrs-{hashlib.blake2b(build.encode(), digest_size=8).hexdigest()}.marshal"
    return (cache_dir or default_cache_dir()) / "lsp-code" / name


def default_cache_dir() -> Path:
    """The same folder as the compile cache (ascend_runner/cache.py), without importing the runner package."""
    raw = os.environ.get("TRITONLENS_CACHE_DIR")
    if raw:
        return Path(raw).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tritonlens"


class CodeCache:
    """The installed hook: code by key, the misses of this process, and `save` to keep them."""

    def __init__(self, path: Path, known: dict[bytes, Any], original: Callable[..., None]) -> None:
        self.path, self.known, self.original = path, known, original
        self.misses: dict[bytes, Any] = {}
        self.used: set[bytes] = set()  # keys this process found in the file

    def compile_and_eval(
        self, script: str, globs: dict[str, Any] | None, locs: Any = None, filename: str = ""
    ) -> None:
        key = hashlib.blake2b(f"{filename}\0{script}".encode(), digest_size=16).digest()
        code = self.known.get(key)
        if type(code) is not CodeType:  # not kept (or not code: never evaluated)
            code = compile(script, filename, "exec")  # what attrs does
            self.misses[key] = code
        else:
            self.used.add(key)
        eval(code, globs, locs)

    @property
    def hits(self) -> int:
        return len(self.used)

    def save(self) -> None:
        """Keep this process's compiles when there were many (a first start, an attrs or lsprotocol upgrade). The
        file then holds what this process used, so code of an older lsprotocol does not pile up."""
        if len(self.misses) <= REWRITE_AFTER_MISSES and self.known:
            return
        merged = {key: self.known[key] for key in self.used}
        merged.update(self.misses)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            partial.write_bytes(marshal.dumps(merged))
            os.replace(partial, self.path)  # a concurrent start reads the old file or the new one, never half
        except OSError as exc:
            log.debug("attrs code cache not written: %s", exc)


def install(cache_dir: Path | None = None) -> CodeCache | None:
    """Route attrs' compiles through the cache; None (attrs untouched) when it cannot be done safely."""
    if os.environ.get("TRITONLENS_NO_CODE_CACHE") == "1":
        return None
    path = cache_file(cache_dir)
    if path is None:
        return None
    import attr._make as attrs_make

    original = getattr(attrs_make, HOOK, None)
    code = getattr(original, "__code__", None)
    if code is None or code.co_varnames[: len(HOOK_PARAMETERS)] != HOOK_PARAMETERS:
        return None  # another attrs: its hook is not the one this cache stands in for
    known: dict[bytes, Any] = {}
    try:
        loaded = marshal.loads(path.read_bytes())
        if isinstance(loaded, dict):
            known = loaded
    except FileNotFoundError:
        pass
    except Exception as exc:  # corrupt or from another build: compiled afresh, rewritten
        log.debug("attrs code cache %s unreadable: %s", path, exc)
    cache = CodeCache(path, known, original)
    setattr(attrs_make, HOOK, cache.compile_and_eval)
    return cache


def uninstall(cache: CodeCache) -> None:
    """Give attrs its own hook back (tests)."""
    import attr._make as attrs_make

    setattr(attrs_make, HOOK, cache.original)
