"""Run code the user did not write (an LLM's candidate) confined: bubblewrap, else util-linux `unshare`, else not at all.

What a confined process gets (both mechanisms):
  - a fresh process, in its own session (killed as a group at its budget's seconds);
  - an allow-listed environment: PATH, locale, the runner's TRITON_*/CUDA_*/ASCEND_* toolchain variables and the
    few the job needs; never a variable whose name says key, token, secret, password or credential;
  - no network: a new network namespace with only a loopback device;
  - the filesystem read-only (a workspace under /tmp stays importable), except one private writable folder (its
    HOME and TMPDIR); /dev/shm is fresh and empty, and the folders in `hidden` (the job's reference outputs) are
    covered by empty ones;
  - limits on CPU seconds, address space (where no accelerator is visible: drivers reserve huge ranges) and the
    number of processes of its user (setrlimit before exec);
  - the accelerator devices (/dev/nvidia*, /dev/davinci*): /dev is passed through.
`mechanism()` probes once which mechanism works here; "none" means neither could start (a container without user
namespaces, say): callers then refuse untrusted code unless the user opted in. Stdlib only (no tritonlens).
"""

from __future__ import annotations

import functools
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)
ALLOWED_NAMES = frozenset({
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM", "LD_LIBRARY_PATH", "CC", "CXX", "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
    "TRITONLENS_WORKER_TAG", "TRITONLENS_WORKER_TEST_HOOKS", "TRITONLENS_DEVICE_LOCK",
})
ALLOWED_PREFIXES = ("LC_", "TRITON_", "CUDA_", "NVIDIA_", "ASCEND_", "TOOLCHAIN_", "NPU_", "HCCL_", "TORCH_")
NETWORK_NAMESPACE = "a new network namespace (loopback only)"


@dataclass(frozen=True)
class Outcome:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    seconds: float


def allowed_environment(environ: Mapping[str, str], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of `environ`, plus `extra` (which is screened the same way)."""
    out: dict[str, str] = {}
    for name, value in [*environ.items(), *(extra or {}).items()]:
        if SECRET_NAME.search(name):
            continue
        if name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES) or (extra and name in extra):
            out[name] = value
    return out


def _works(argv: list[str]) -> bool:
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


@functools.lru_cache(maxsize=1)
def mechanism() -> str:
    """"bwrap", "unshare" or "none": the first mechanism that can start a confined `true` on this machine.
    TRITONLENS_SANDBOX=none|unshare|bwrap forces one (tests of the refusal path; "none" never confines)."""
    forced = os.environ.get("TRITONLENS_SANDBOX", "").strip().lower()
    if forced == "none":
        return "none"
    true = shutil.which("true") or "/bin/true"
    bwrap, unshare = shutil.which("bwrap"), shutil.which("unshare")
    if forced in ("", "bwrap") and bwrap and _works([*_bwrap_prefix(bwrap, "/tmp", [], "/"), true]):
        return "bwrap"
    if forced in ("", "unshare") and unshare and _works([*_unshare_prefix(unshare), true]):
        return "unshare"
    return "none"


def why_none() -> str:
    return ("no sandbox can start on this runner: neither bubblewrap (`apt-get install bubblewrap`) nor util-linux "
            "`unshare` could create user and network namespaces here")


def _bwrap_prefix(bwrap: str, writable: str, hidden: Sequence[str], cwd: str) -> list[str]:
    argv = [bwrap, "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc", "--tmpfs", "/dev/shm"]
    for folder in hidden:
        if os.path.isdir(folder):
            argv += ["--tmpfs", folder]
    argv += ["--bind", writable, writable, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
             "--die-with-parent", "--new-session", "--chdir", cwd, "--"]
    return argv


def _unshare_prefix(unshare: str) -> list[str]:
    # The mounts (read-only remount, fresh /tmp, the writable folder) are made inside by sandbox_init.py.
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    return [unshare, *user, "--mount", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "--"]


def confined_argv(argv: Sequence[str], writable: str, hidden: Sequence[str] = (), kind: str | None = None) -> list[str]:
    """`argv` wrapped by the mechanism `kind` (default: the probed one); raises RuntimeError for "none"."""
    kind = kind or mechanism()
    if kind == "bwrap":
        return [*_bwrap_prefix(shutil.which("bwrap") or "bwrap", writable, hidden, writable), *argv]
    if kind == "unshare":
        init = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox_init.py")
        return [*_unshare_prefix(shutil.which("unshare") or "unshare"), sys.executable, "-I", "-S", init, writable,
                ",".join(hidden), "--", *argv]
    raise RuntimeError(why_none())


def _process_count(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


def _limits(cpu_s: float, memory_mb: float | None, processes: int) -> list[tuple[int, tuple[int, int]]]:
    """The rlimits, computed before the fork (the child between fork and exec only calls setrlimit)."""
    cpu = max(1, int(cpu_s))
    limits = [(resource.RLIMIT_CPU, (cpu, cpu + 5)), (resource.RLIMIT_CORE, (0, 0))]
    if memory_mb:
        cap = int(memory_mb * 1024 * 1024)
        limits.append((resource.RLIMIT_AS, (cap, cap)))
    # RLIMIT_NPROC counts every process of the user: what it runs now plus the job's own allowance.
    nproc = _process_count(os.getuid()) + processes
    limits.append((resource.RLIMIT_NPROC, (nproc, nproc)))
    return limits


def _apply(limits: list[tuple[int, tuple[int, int]]]) -> None:
    for which, value in limits:
        resource.setrlimit(which, value)


def run_confined(
    argv: Sequence[str],
    *,
    writable: str,
    env: Mapping[str, str],
    timeout_s: float,
    hidden: Sequence[str] = (),
    memory_mb: float | None = None,
    processes: int = 256,
    kind: str | None = None,
    stdin: bytes = b"",
) -> Outcome:
    """Run `argv` confined (or, with kind "plain", only with the environment, limits and group kill: the user's
    explicit opt-in where no sandbox exists), killed with its whole session at `timeout_s`."""
    home = os.path.join(writable, "home")
    os.makedirs(home, exist_ok=True)
    full_env = {**dict(env), "HOME": home, "TMPDIR": writable}
    wrapped = list(argv) if kind == "plain" else confined_argv(argv, writable, hidden, kind)
    limits = _limits(timeout_s + 5, memory_mb, processes)
    started = time.monotonic()
    proc = subprocess.Popen(
        wrapped, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env, cwd=writable,
        start_new_session=True, preexec_fn=lambda: _apply(limits),
    )
    timed_out = False
    try:
        out, err = proc.communicate(stdin, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_session(proc.pid)
        out, err = proc.communicate()
    finally:
        _kill_session(proc.pid)  # whatever it left behind in its session
    return Outcome(proc.returncode, out[-200_000:], err[-200_000:], timed_out, time.monotonic() - started)


def _kill_session(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass
