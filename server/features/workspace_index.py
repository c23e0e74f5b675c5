"""An index of every Triton kernel in the workspace folders, kept current by watching the disk (watchdog).

The initial scan runs in a background thread; file system events re-analyze single files. Open documents are
not read from here (the server uses the editor's text for them): this only covers files as saved on disk.
"""

from __future__ import annotations

import bisect
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from ...analysis.core.findings import Finding
from ..source_files import read_python_source

log = logging.getLogger(__name__)

SKIP_DIRS = {"node_modules", "__pycache__", "site-packages", "build", "dist"}
MAX_FILE_BYTES = 1_000_000  # generated or vendored files this large are not hand-written kernels


@dataclass(frozen=True)
class IndexedKernel:
    name: str
    line: int  # 1-based line of the `def` (what a person looks for)
    start_line: int  # first decorator line
    end_line: int


@dataclass(frozen=True)
class IndexedFile:
    path: str
    kernels: tuple[IndexedKernel, ...]
    findings: tuple[Finding, ...]  # unfiltered; settings are applied when the index is queried
    platforms: tuple[str, ...] = ("cuda", "ascend")  # what the file is written for (analysis.platform)


Analyzer = Callable[[str, str], IndexedFile]  # (text, path) -> IndexedFile


def skipped_dir(name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIRS


def wanted_file(path: str, root: str) -> bool:
    """A .py file not inside a skipped folder below `root` (the root itself may be anywhere)."""
    if not path.endswith(".py"):
        return False
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return False
    return bool(parts) and not any(skipped_dir(p) for p in parts[:-1]) and not parts[-1].startswith(".")


class _Events(FileSystemEventHandler):
    def __init__(self, index: WorkspaceIndex) -> None:
        self.index = index

    def on_any_event(self, event: FileSystemEvent) -> None:
        try:
            self.index.handle_event(event)
        except Exception:  # a watcher thread must never die on one bad file
            log.exception("workspace index: failed to handle %s", event)


class WorkspaceIndex:
    def __init__(self, analyze: Analyzer, on_change: Callable[[], None] | None = None) -> None:
        self._analyze = analyze
        self._on_change = on_change
        self._lock = threading.Lock()
        self._files: dict[str, IndexedFile] = {}
        self._roots: dict[str, object] = {}  # root path -> watchdog watch handle
        self._observer = Observer()
        self._observer.daemon = True
        self._started = False
        self._scans: dict[str, threading.Thread] = {}
        self._stopped = False
        # Cleared while the editor waits for an analysis: background scans pause so they do not share the GIL
        # with it (a big workspace's first scan would otherwise double the editor's latency).
        self.editor_idle = threading.Event()
        self.editor_idle.set()
        self.start_delay_s = 0.0  # the server delays its initial scans (SCAN_START_DELAY_S)
        # Files open in the editor are analysed from its text: read from disk again when closed, not while open.
        self.is_open: Callable[[str], bool] = lambda path: False
        self.settle_s = 0.0  # a file event is handled this long after the last one for that file (0: at once)
        self._timers: dict[str, threading.Timer] = {}

    # --- folders -----------------------------------------------------------------------------------------
    def add_root(self, root: str) -> None:
        root = os.path.abspath(root)
        if root in self._roots or not os.path.isdir(root):
            return
        if not self._started:
            self._observer.start()
            self._started = True
        try:
            self._roots[root] = self._observer.schedule(_Events(self), root, recursive=True)
        except OSError as exc:  # e.g. inotify watch limit reached: still scan once
            log.warning("workspace index: cannot watch %s: %s", root, exc)
            self._roots[root] = None
        thread = threading.Thread(
            target=self._scan, args=(root,), name=f"tritonlens-scan:{root}", daemon=True
        )
        self._scans[root] = thread
        thread.start()

    def remove_root(self, root: str) -> None:
        root = os.path.abspath(root)
        watch = self._roots.pop(root, None)
        if watch is not None:
            try:
                self._observer.unschedule(watch)
            except (KeyError, ValueError):
                pass
        self._drop_under(root)

    @property
    def roots(self) -> list[str]:
        return list(self._roots)

    def wait_scanned(self, timeout: float | None = None) -> bool:
        """Block until the initial scans finished (for tests and benchmarks)."""
        for thread in list(self._scans.values()):
            thread.join(timeout)
        return not any(t.is_alive() for t in self._scans.values())

    def stop(self) -> None:
        self._stopped = True
        if self._started:
            self._observer.stop()

    # --- queries -----------------------------------------------------------------------------------------
    def files(self) -> list[IndexedFile]:
        with self._lock:
            return sorted(self._files.values(), key=lambda f: f.path)

    def get(self, path: str) -> IndexedFile | None:
        with self._lock:
            return self._files.get(os.path.abspath(path))

    # --- updates -----------------------------------------------------------------------------------------
    def candidates(self, root: str) -> list[str]:
        """The .py files under `root` that the index covers, in a stable order."""
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not skipped_dir(d))
            out.extend(
                os.path.join(dirpath, n)
                for n in sorted(filenames)
                if n.endswith(".py") and not n.startswith(".")
            )
        return out

    def _scan(self, root: str) -> None:
        # The client opens its visible editors right after `initialized`: their first answer goes first.
        time.sleep(self.start_delay_s)
        for path in self.candidates(root):
            self.editor_idle.wait(timeout=2.0)  # bounded: a stuck flag must not stop the scan for good
            if self._stopped or root not in self._roots:
                return
            self.refresh(path, notify=False)
        self._notify()

    def refresh(self, path: str, notify: bool = True) -> None:
        """Re-read one file from disk (or forget it if it is gone, too big, or unreadable); a file open in the
        editor is left for `closed` (the editor's analysis of its text is what the user sees meanwhile)."""
        path = os.path.abspath(path)
        if self.is_open(path):
            return
        entry = self._read(path)
        with self._lock:
            if entry is None:
                changed = self._files.pop(path, None) is not None
            else:
                self._files[path] = entry
                changed = True
        if changed and notify:
            self._notify()

    def _read(self, path: str) -> IndexedFile | None:
        try:
            if os.path.getsize(path) > MAX_FILE_BYTES:
                return None
            text = read_python_source(path)
        except (OSError, UnicodeDecodeError):
            return None
        if "triton" not in text:  # cheap filter: non-Triton Python has no kernels to index
            return IndexedFile(path, (), ())
        try:
            return self._analyze(text, path)
        except Exception:
            log.exception("workspace index: analysis failed for %s", path)
            return None

    def _drop_under(self, folder: str) -> None:
        prefix = folder.rstrip(os.sep) + os.sep
        with self._lock:
            for path in [p for p in self._files if p.startswith(prefix)]:
                del self._files[path]
        self._notify()

    def _notify(self) -> None:
        if self._on_change is not None:
            try:
                self._on_change()
            except Exception:
                log.exception("workspace index: change callback failed")

    def closed(self, path: str) -> None:
        """The editor closed `path`: read it from disk again (it may have been saved while open)."""
        self._later(os.path.abspath(path))

    def _later(self, path: str) -> None:
        """Refresh `path` once events for it stop for `settle_s` (a save, or a write followed by an open in the
        editor, then costs one read, after the editor's own answer)."""
        if self.settle_s <= 0:
            self.refresh(path)
            return
        with self._lock:
            old = self._timers.pop(path, None)
            if old is not None:
                old.cancel()
            timer = threading.Timer(self.settle_s, self._settled, args=(path,))
            timer.daemon = True
            self._timers[path] = timer
        timer.start()

    def _settled(self, path: str) -> None:
        with self._lock:
            self._timers.pop(path, None)
        if not self._stopped:
            self.editor_idle.wait(timeout=2.0)
            self.refresh(path)

    def handle_event(self, event: FileSystemEvent) -> None:
        src = os.fsdecode(event.src_path)
        kind = event.event_type
        if kind in ("opened", "closed_no_write"):
            return
        if event.is_directory:
            if kind == "deleted":
                self._drop_under(src)
            elif kind == "moved":
                self._drop_under(src)
                self._rescan_dir(os.fsdecode(event.dest_path))
            elif kind == "created":
                self._rescan_dir(src)
            return
        if kind == "moved":
            dest = os.fsdecode(event.dest_path)
            if self._wanted(src):
                self._later(os.path.abspath(src))
            if self._wanted(dest):
                self._later(os.path.abspath(dest))
            return
        if self._wanted(src):
            self._later(os.path.abspath(src))

    def _wanted(self, path: str) -> bool:
        return any(wanted_file(path, root) for root in list(self._roots))

    def _rescan_dir(self, folder: str) -> None:
        if not self._wanted(os.path.join(folder, "x.py")):
            return
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = [d for d in dirnames if not skipped_dir(d)]
            for name in filenames:
                if name.endswith(".py"):
                    self.refresh(os.path.join(dirpath, name), notify=False)
        self._notify()


def findings_by_kernel(findings: Sequence[Finding], kernels: Sequence[tuple[str, int, int]]) -> list[list[Finding]]:
    """The findings of each (name, first line, last line) kernel: tagged with its name, or untagged and inside its
    lines; in the order of `findings`. O(findings + kernels + answers), not O(findings) per kernel."""
    by_name: dict[str, list[int]] = {}
    untagged: list[tuple[int, int]] = []
    for i, f in enumerate(findings):
        if f.kernel is not None:
            by_name.setdefault(f.kernel, []).append(i)
        else:
            untagged.append((f.span.line, i))
    untagged.sort()
    lines = [line for line, _ in untagged]
    out: list[list[Finding]] = []
    for name, start, end in kernels:
        inside = (i for _, i in untagged[bisect.bisect_left(lines, start) : bisect.bisect_right(lines, end)])
        out.append([findings[i] for i in sorted({*by_name.get(name, ()), *inside})])
    return out
