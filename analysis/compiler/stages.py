"""The compiler stages per platform, declared once (Triton's `compiler.py` model: each backend adds its stages;
one loop runs them): a stage's name (its key in a compile result's `stages`), the worker step that returns its
text, its parser and its attribution to source lines.

`ParsedStages` (the parsed form of each stage), `attribute` (per-line counts and IR-line maps), the CLI's
`tritonlens ir --stage` list and the IR view's stage list are all read from here. A backend declares its stages
in `analysis/compiler/<backend>/stages.py` (`add_stage(Stage(...))`); every such module is found by discovery.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..core.findings import PLATFORMS


@dataclass(frozen=True)
class Stage:
    name: str  # the key of the compile result's `stages` dict and `tritonlens ir --stage NAME`
    platform: str  # the backend whose compile produces it ("cuda", "ascend")
    worker: str  # the worker step that returns its text (ascend_runner/worker/...)
    parse: Callable[[str], Any] | None = None  # text -> parsed form (`ParsedStages.<name>`); None: text only
    # counts the parsed form per source line: attribute(parsed_form, attributor) (see attribution.Attributor)
    attribute: Callable[[Any, Any], None] | None = None
    comment: str = "//"  # how a line comment starts in its text (where `tritonlens ir` puts source markers)
    dumps: tuple[str, ...] = ()  # sub-stages `NAME.<dump>` the same step returns (bishengir pass dumps)
    text: bool = True  # False: a binary (its entry is a placeholder), listed by the IR view, not by `tritonlens ir`


_STAGES: dict[str, list[Stage]] = {}
_loaded = False


def add_stage(stage: Stage) -> Stage:
    """Declare a stage of `stage.platform` (after the platform's stages declared before it)."""
    if stage.platform not in PLATFORMS:
        raise ValueError(f"stage {stage.name}: unknown platform {stage.platform!r}")
    found = _STAGES.setdefault(stage.platform, [])
    found[:] = [s for s in found if s.name != stage.name]
    found.append(stage)
    return stage


def remove_stage(platform: str, name: str) -> None:
    _STAGES[platform] = [s for s in _STAGES.get(platform, []) if s.name != name]


def stages(platform: str) -> list[Stage]:
    """The stages of one platform, in compile order."""
    _load()
    return list(_STAGES.get(platform, ()))


def stage(platform: str, name: str) -> Stage | None:
    return next((s for s in stages(platform) if s.name == name), None)


def stage_names(platform: str | None = None, *, binaries: bool = False) -> tuple[str, ...]:
    """Text stage names of one platform, or of every platform (in `PLATFORMS` order, each name once)."""
    names: dict[str, None] = {}
    for p in (platform,) if platform else PLATFORMS:
        names.update((s.name, None) for s in stages(p) if s.text or binaries)
    return tuple(names)


def only_on(platform: str) -> tuple[str, ...]:
    """Stages no other platform produces (the CLI refuses them for another platform's target)."""
    others = {n for p in PLATFORMS if p != platform for n in stage_names(p)}
    return tuple(n for n in stage_names(platform) if n not in others)


def dump_names(platform: str | None = None) -> tuple[str, ...]:
    """`NAME.<dump>` sub-stages of the stages of one platform (or all)."""
    plats = (platform,) if platform else PLATFORMS
    return tuple(f"{s.name}.{d}" for p in plats for s in stages(p) for d in s.dumps)


def ordered(produced: Iterable[str], platform: str) -> list[str]:
    """The stages a compile produced, in the platform's declared order (each followed by its `NAME.<dump>`
    sub-stages as produced), then any other key it returned, in its own order."""
    have = list(produced)
    out: list[str] = []
    for s in stages(platform):
        if s.name in have:
            out.append(s.name)
        out += [n for n in have if n.startswith(f"{s.name}.") and n not in out]
    return out + [n for n in have if n not in out]


def comment_of(name: str) -> str:
    base = name.split(".", 1)[0]
    for p in PLATFORMS:
        found = stage(p, base)
        if found is not None:
            return found.comment
    return "//"


def _load() -> None:
    # Backends declare their stages in `<backend>/stages.py`; discovered, not listed.
    global _loaded
    if _loaded:
        return
    _loaded = True
    package = importlib.import_module(__package__)
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg and importlib.util.find_spec(f"{__package__}.{info.name}.stages") is not None:
            importlib.import_module(f"{__package__}.{info.name}.stages")
