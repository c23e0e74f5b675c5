"""Recording real launches from the editor: the `tritonlens.recordLaunches` command and a code lens on every
kernel that has nothing recorded ("no launches recorded: Record from <command>").

Arguments: [uri, command?]. The command is a string or a list (`pytest tests/test_rms_norm.py -k small`,
`python bench.py`); without one, the server picks a test file of the workspace that imports the document's
module (`pytest -q <that file>`), else the document itself when it has a `__main__` block. It runs in the
workspace root in the local runner environment (`tritonlens.profileBackend`: cuda, npu or interpret; auto
picks cuda when nvidia-smi is on PATH, npu with npu-smi, else interpret), with `$/progress` showing the
command's output and a cancel button; the launches land in the workspace store (server.launch_store), the
kernels' IR results are dropped so the next analysis uses the real launches. Registered after
CompileFeature.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from ..engine.record.launch_store import recorded_kernels, save, workspace_root
from ..engine.record.suggest import default_command
from ..lsp.commands import CommandError, arg
from ..lsp.feature import Feature
from ..lsp.progress import work_done
from .compile import CompileFeature

if TYPE_CHECKING:
    from ..lsp.core import TritonLensServer

RECORD_COMMAND = "tritonlens.recordLaunches"
_SKIP = frozenset({"node_modules", "build", "dist", "site-packages", "__pycache__"})


class RecordService:
    def __init__(self, server: Any) -> None:
        self.server = server
        self._counts: dict[str, tuple[int, dict[str, int]]] = {}  # uri -> (version, kernel -> launches)
        self._lock = threading.Lock()

    def counts(self, uri: str, version: int, path: str, text: str) -> dict[str, int]:
        """Recorded launches per kernel of a document version (read once per version, not per lens)."""
        with self._lock:
            hit = self._counts.get(uri)
            if hit is not None and hit[0] == version:
                return hit[1]
        try:
            counts = recorded_kernels(path, text)
        except OSError:
            counts = {}
        with self._lock:
            self._counts[uri] = (version, counts)
        return counts

    def invalidate(self) -> None:
        with self._lock:
            self._counts.clear()


class RecordFeature(Feature):
    """`tritonlens.recordLaunches` and a lens on each kernel that has no launch recorded."""

    name = "record"
    server: TritonLensServer  # set by register

    def __init__(self, compile: CompileFeature) -> None:
        super().__init__()
        self.compile = compile

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        self.service = RecordService(server)
        server.commands.add(RECORD_COMMAND, "Record real launches from a test or script", self.record_command)

    async def record_command(self, ls: Any, args: list[Any]) -> dict[str, Any]:
        service = self.service
        uri = arg(args, 0, str, "document URI")
        path = Path(to_fs_path(uri) or uri)
        root = workspace_root(path)
        raw = args[1] if len(args) > 1 else None
        if isinstance(raw, str) and raw.strip():
            argv = shlex.split(raw)
        elif isinstance(raw, list) and raw and all(isinstance(a, str) for a in raw):
            argv = list(raw)
        elif raw in (None, "", []):
            argv = default_command(path, root) or []
            if not argv:
                raise CommandError(
                    "no test imports this file and it has no __main__ block: pass the command to record, e.g. "
                    "`pytest tests/test_x.py -k small` or `python bench.py`"
                )
        else:
            raise CommandError("argument 2 (command) must be a string or a list of strings")
        config = ls.config.for_uri(uri).raw
        # The recording and profiling engines (and the runner client) are imported by a run, never at server start.
        from ..engine.profile.jobs import backend_setting
        from ..engine.record.jobs import default_backend, record_local

        chosen = backend_setting(config.get("profileBackend") if isinstance(config, dict) else None)
        backend = chosen or default_backend(shutil.which)
        loop = asyncio.get_running_loop()
        title = f"tritonlens: recording launches of `{' '.join(argv)}` ({backend})"
        async with work_done(ls, title) as progress:

            def echo(line: str) -> None:
                text = line.strip()
                if text:
                    loop.call_soon_threadsafe(progress.report, text[:120])

            outcome = await loop.run_in_executor(
                None,
                lambda: record_local(
                    argv, root, backend, 600.0, on_output=echo, cancel=progress.cancel_event
                ),
            )
        if outcome.setup_error:
            raise CommandError(outcome.setup_error)
        summary = await loop.run_in_executor(None, lambda: save(root, outcome.run.launches))
        service.invalidate()
        pipeline = self.compile.service
        if summary.stored:
            # IR results of the old guesses go; the next analysis compiles the real launches
            for open_uri in {key[0] for key in list(pipeline.results)}:
                pipeline.forget(open_uri)
        stored = sum(sum(k.values()) for k in summary.stored.values())
        message = (
            f"tritonlens: recorded {stored} distinct launch(es) of {sum(len(k) for k in summary.stored.values())} "
            f"kernel(s) from `{' '.join(argv)}`"
            if stored
            else f"tritonlens: `{' '.join(argv)}` launched no kernel of this workspace"
        )
        if outcome.run.errors:
            message += " (" + "; ".join(outcome.run.errors[:2]) + ")"
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Info if stored else types.MessageType.Warning, message=message
            )
        )
        ls.lenses_changed()
        return {
            "command": argv,
            "backend": backend,
            "returncode": outcome.run.returncode,
            "stored": summary.stored,
            "errors": outcome.run.errors,
        }

    def lens_kernels(self, version: Any) -> set[str] | None:
        """Kernels with nothing recorded (reads the launch store: called off the event loop, once per version)."""
        analysis = version.analysis
        path = to_fs_path(version.uri) or version.uri
        counts = self.service.counts(version.uri, analysis.version, path, version.text)
        return {k.name for k in analysis.kernels if not counts.get(k.name)}

    def lens_command(self, doc: Any, kernel: Any, findings: list[Any]) -> types.Command:
        return types.Command(
            title="tritonlens: no launches recorded (IR uses assumed values): record from a test or script",
            command=RECORD_COMMAND,
            arguments=[doc.uri],
        )
