"""Target names, read in one place.

Two vocabularies: the platform setting (`target`: "auto" | "cuda" | "ascend" | "both", which platforms' rules
apply; "auto" decides per file in analysis.platform) and compile targets (NVIDIA `sm_80` ... `sm_100`, Ascend
SoC names such as `ascend910b3`) that levels 3-4 compile for. The CLI, the language server, the engines, the
analyzers and the rewrite recipes ask here (tests/test_target_checks.py fails on a target name read anywhere
else); the runner's protocol keeps its own table for validating jobs (a test holds the two
equal, since workers cannot import this package).
"""

from __future__ import annotations

CUDA_TARGETS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100")
ASCEND_TARGETS = ("ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4", "ascend910_9391", "ascend950")
COMPILE_TARGETS = (*CUDA_TARGETS, *ASCEND_TARGETS)
DEFAULT_CUDA_TARGET = "sm_90"
DEFAULT_ASCEND_TARGET = "ascend910b3"

# "auto" decides per file (analysis.platform); until a file is known it stands for both platforms.
PLATFORM_SETTINGS: dict[str, tuple[str, ...]] = {
    "auto": ("cuda", "ascend"),
    "cuda": ("cuda",),
    "ascend": ("ascend",),
    "both": ("cuda", "ascend"),
}


def is_cuda_target(target: str) -> bool:
    """An NVIDIA compile target: `sm_90`, `sm_90a`, `cuda:90` (any case)."""
    return target.lower().startswith(("sm_", "cuda"))


def is_ascend_target(target: str) -> bool:
    """An Ascend SoC: `ascend910b3`, `Ascend910B3` (any case)."""
    return target.lower().startswith("ascend")


def cuda_capability(target: str) -> int | None:
    """The compute capability of an NVIDIA target as one number: "sm_90" / "sm_90a" / "cuda:90" -> 90; None for
    a target that names none (an Ascend SoC, "auto")."""
    if not is_cuda_target(target):
        return None
    digits = "".join(ch for ch in target.split("_")[-1].split(":")[-1] if ch.isdigit())
    return int(digits) if digits else None


def platform_of(target: str) -> str:
    """ "cuda" for sm_* targets, "ascend" for Ascend SoCs (the rules' platform of a compile target)."""
    return "ascend" if is_ascend_target(target) else "cuda"


def compile_target_problem(target: object) -> str | None:
    """Why `target` is not a compile target (one sentence naming the valid ones), or None when it is."""
    if isinstance(target, str) and target in COMPILE_TARGETS:
        return None
    if target in PLATFORM_SETTINGS:
        return (
            f"{target!r} is a platform setting, not a compile target; use one of {', '.join(COMPILE_TARGETS)} "
            "(or leave the target out to compile for the file's own platform)"
        )
    return f"unknown target {target!r}; use one of {', '.join(COMPILE_TARGETS)}"


def compile_target_for(
    platforms: tuple[str, ...], cuda_target: str = DEFAULT_CUDA_TARGET, ascend_target: str = DEFAULT_ASCEND_TARGET
) -> str:
    """The compile target for a file written for `platforms`: its platform's default (CUDA when both)."""
    return cuda_target if "cuda" in platforms else ascend_target


def choose_compile_target(requested: object, configured: object, platforms: tuple[str, ...]) -> str:
    """The compile target of one analysis: an explicit request ("auto" and None defer), else the configured
    one when valid, else the default of the file's platform. Raises ValueError for an invalid request."""
    if requested is not None and requested != "auto":
        problem = compile_target_problem(requested)
        if problem:
            raise ValueError(problem)
        return str(requested)
    if isinstance(configured, str) and configured in COMPILE_TARGETS:
        return configured
    return compile_target_for(platforms)
