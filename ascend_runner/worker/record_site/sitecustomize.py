"""Installed by `tritonlens record` (this folder leads PYTHONPATH): every Python process the recorded command
starts records its Triton launches and writes them, at exit, to $TRITONLENS_RECORD_DIR/launches-<pid>.json.

Stdlib + triton only; never imports tritonlens. Recording must never break the user's program: any failure
here is written to the same file as an error and the program runs on unrecorded. An existing
`sitecustomize` further down the path still runs (this one hands over to it).
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import sys
import time

_DIR = os.environ.get("TRITONLENS_RECORD_DIR", "")
_HERE = os.path.dirname(os.path.abspath(__file__))
_KEEP: list[object] = []


def _install() -> None:
    errors: list[str] = []
    recorder = None
    try:
        worker = os.path.dirname(_HERE)
        sys.path.insert(0, worker)  # only to import the recorder; removed at once (worker names are generic)
        try:
            import harness_record
        finally:
            sys.path.remove(worker)
        recorder = harness_record.LaunchRecorder(
            max_launches=int(os.environ.get("TRITONLENS_RECORD_MAX", "256"))
        )
        context = harness_record.recording(recorder)
        context.__enter__()  # for the life of the process
        _KEEP.append(context)  # a collected context manager would close its generator and undo the patch
    except Exception as exc:  # noqa: BLE001 - triton missing or incompatible: say so, run unrecorded
        errors.append(f"the launch recorder could not be installed: {type(exc).__name__}: {exc}")

    def dump() -> None:
        out = {
            "pid": os.getpid(),
            "argv": list(sys.argv),
            "cwd": os.getcwd(),
            "time": time.time(),
            "launches": list(recorder.launches) if recorder else [],
            "errors": errors + (list(recorder.errors) if recorder else []),
            "dropped": recorder.dropped if recorder else 0,
        }
        try:
            path = os.path.join(_DIR, f"launches-{os.getpid()}.json")
            with open(path + ".tmp", "w", encoding="utf-8") as fh:
                json.dump(out, fh, default=repr)
            os.replace(path + ".tmp", path)
        except OSError:
            pass

    atexit.register(dump)


def _chain() -> None:
    """Run the sitecustomize this one shadows, if any (Debian's Python ships one)."""
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == _HERE:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_tritonlens_next_sitecustomize", candidate)
            if spec and spec.loader:
                try:
                    spec.loader.exec_module(importlib.util.module_from_spec(spec))
                except Exception:  # noqa: BLE001 - theirs failing must not stop the program either
                    pass
            return


if _DIR and os.path.isdir(_DIR):
    _install()
_chain()
