"""Find each runner environment's Python interpreter, and which environment serves which target.

Lookup order per environment: explicit config ({"cuda": {"python": PATH}, "ascend": {"python": PATH}}),
then the environment variables TRITONLENS_CUDA_PYTHON / TRITONLENS_ASCEND_PYTHON, then
`<repo>/.envs/<name>/bin/python` next to the installed source tree, then under the current directory.
No subprocess is started here: this runs on the language server's hot path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analysis.core.targets import is_ascend_target, is_cuda_target

ENVIRONMENTS = ("cuda", "ascend")
ENV_VARS = {"cuda": "TRITONLENS_CUDA_PYTHON", "ascend": "TRITONLENS_ASCEND_PYTHON"}
# The package each environment is built around, as named in its .dist-info folder.
COMPILER_DISTS = {"cuda": ("triton",), "ascend": ("triton_ascend", "triton-ascend")}
COMPILER_LABELS = {"cuda": "triton", "ascend": "triton-ascend"}
# Further compilers an environment's results depend on (part of the cache key): BiSheng's pipeline (hivm stage).
EXTRA_DISTS = {"ascend": ("ascendnpu_ir",)}
# Job backend -> environment that runs it (the interpreter backend is upstream Triton's).
BACKEND_ENVIRONMENTS = {"cuda": "cuda", "interpret": "cuda", "ascend": "ascend", "npu": "ascend"}
REPO_ROOT = Path(__file__).resolve().parent.parent


class EnvironmentUnavailable(RuntimeError):
    """No usable interpreter for an environment; the message says how to set one up."""


@dataclass(frozen=True)
class Environment:
    name: str  # "cuda" | "ascend"
    python: str  # absolute path of the interpreter
    found_by: str  # "config" | "$TRITONLENS_CUDA_PYTHON" | "repository" | "working directory"

    def compiler_version(self) -> str:
        return compiler_version(self)


def environment_for_target(target: str) -> str:
    """sm_* targets compile in the cuda environment, ascend* in the ascend one; "interpret" runs in cuda."""
    if is_cuda_target(target) or target == "interpret":
        return "cuda"
    if is_ascend_target(target):
        return "ascend"
    raise ValueError(f"no runner environment serves target {target!r}")


def environment_for_backend(backend: str) -> str:
    try:
        return BACKEND_ENVIRONMENTS[backend]
    except KeyError:
        raise ValueError(
            f"unknown backend {backend!r}; use one of {', '.join(BACKEND_ENVIRONMENTS)}"
        ) from None


def _setup_hint(name: str) -> str:
    flag = " --all" if name == "ascend" else ""
    return (
        f"the {name} runner environment is not set up: run `scripts/bootstrap{flag}` in the tritonlens "
        f"checkout (it creates .envs/{name}), or point ${ENV_VARS[name]} (or the runner config "
        f'{{"{name}": {{"python": PATH}}}}) at a Python that has {COMPILER_LABELS[name]} installed'
    )


def _usable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_environment(name: str, config: Mapping[str, Any] | None = None) -> Environment:
    """The interpreter of environment `name`; raises EnvironmentUnavailable with setup advice."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown runner environment {name!r}; use one of {', '.join(ENVIRONMENTS)}")
    section = (config or {}).get(name)
    if isinstance(section, Mapping) and section.get("python"):
        python = str(Path(str(section["python"])).expanduser())
        if not _usable(python):
            raise EnvironmentUnavailable(f"configured {name} python {python!r} is not an executable file")
        return Environment(name, os.path.abspath(python), "config")
    from_env = os.environ.get(ENV_VARS[name])
    if from_env:
        python = str(Path(from_env).expanduser())
        if not _usable(python):
            raise EnvironmentUnavailable(f"${ENV_VARS[name]}={from_env!r} is not an executable file")
        return Environment(name, os.path.abspath(python), f"${ENV_VARS[name]}")
    for root, how in ((REPO_ROOT, "repository"), (Path.cwd(), "working directory")):
        # Not resolved: a venv's bin/python is a symlink and must run as itself to see its site-packages.
        python = root / ".envs" / name / "bin" / "python"
        if _usable(str(python)):
            return Environment(name, str(python.absolute()), how)
    raise EnvironmentUnavailable(_setup_hint(name))


def available_environments(config: Mapping[str, Any] | None = None) -> dict[str, Environment | str]:
    """Each environment, or the message that says why it is unavailable."""
    out: dict[str, Environment | str] = {}
    for name in ENVIRONMENTS:
        try:
            out[name] = find_environment(name, config)
        except EnvironmentUnavailable as exc:
            out[name] = str(exc)
    return out


def _site_packages(python: str) -> list[Path]:
    prefix = Path(python).parent.parent
    return sorted(prefix.glob("lib/python3*/site-packages")) + sorted(prefix.glob("Lib/site-packages"))


def compiler_version(env: Environment) -> str:
    """e.g. "triton 3.6.0", "triton-ascend 3.2.0 + ascendnpu_ir 1.2.0": from the environment's .dist-info
    folders (no interpreter started)."""
    main = _dist_version(env.python, COMPILER_DISTS[env.name])
    out = f"{COMPILER_LABELS[env.name]} {main or '(unknown version)'}"
    for dist in EXTRA_DISTS.get(env.name, ()):
        extra = _dist_version(env.python, (dist,))
        if extra:
            out += f" + {dist} {extra}"
    return out


def _dist_version(python: str, dists: tuple[str, ...]) -> str | None:
    for site in _site_packages(python):
        for dist in dists:
            for info in sorted(site.glob(f"{dist}-*.dist-info")):
                m = re.match(rf"{re.escape(dist)}-(?P<v>[^-]+)\.dist-info$", info.name)
                if m:
                    return m.group("v")
    return None
