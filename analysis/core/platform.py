"""Which platform a file's kernels are written for, decided from evidence in the text and the path.

`target = "auto"` (the default setting) resolves per file through `decide(source, path)`: Ascend evidence
(`import torch_npu`, `triton.language.extra.cann` / `triton.backends.ascend`, `device="npu"`, `.npu()`; without
those, a path under an `ascend`/`npu`/`_ascend`/`vllm_ascend` folder) makes the file Ascend; CUDA evidence
(`device="cuda"`, `.cuda()`, `triton.language.extra.cuda`, TMA descriptors, inline PTX; without those, `cuda`
folders) makes it CUDA; both make it both. Run-time device dispatch (`if device == "npu":`, `torch.npu.*`) is
generic upstream Triton code, not evidence. A file with no evidence is taken as CUDA (upstream Triton's own
platform) and says so in `evidence`. Pure text; never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

from .targets import PLATFORM_SETTINGS

# (pattern, what it shows): strong evidence, searched in the whole text. A file that only compares a device
# string (`if device == "npu":`) or touches `torch.npu` dispatches at run time: generic upstream Triton code.
_ASCEND_TEXT = (
    (re.compile(r"^\s*(?:import|from)\s+torch_npu\b", re.M), "imports torch_npu"),
    (
        re.compile(r"triton\.language\.extra\.cann\b|from\s+triton\.language\.extra\s+import\s+cann"),
        "uses triton.language.extra.cann",
    ),
    (re.compile(r"triton\.backends\.ascend\b"), "uses triton.backends.ascend"),
    (re.compile(r"""device\s*=\s*['"]npu"""), 'device="npu"'),
    (re.compile(r"\.npu\(\)"), ".npu()"),
)
_CUDA_TEXT = (
    (re.compile(r"""device\s*=\s*['"]cuda"""), 'device="cuda"'),
    (re.compile(r"\.cuda\(\)"), ".cuda()"),
    (re.compile(r"triton\.language\.extra\.cuda\b|extra\.cuda\s+import"), "uses triton.language.extra.cuda"),
    (
        re.compile(r"\bTensorDescriptor\b|make_tensor_descriptor|_experimental_descriptor"),
        "uses TMA descriptors",
    ),
    (re.compile(r"\binline_asm_elementwise\b"), "inline PTX"),
)
# Folder names, split into tokens (`_ascend`, `vllm_ascend`, `backend-npu`): backend folders of kernel libraries.
_ASCEND_FOLDERS = frozenset({"ascend", "npu", "cann"})
_CUDA_FOLDERS = frozenset({"cuda", "nvidia", "hopper", "blackwell", "ampere"})
_TOKEN = re.compile(r"[A-Za-z0-9]+")


@dataclass(frozen=True)
class PlatformDecision:
    platforms: tuple[str, ...]  # ("cuda",), ("ascend",) or ("cuda", "ascend")
    evidence: tuple[str, ...]  # why, one short phrase each
    assumed: bool = False  # no evidence: the default was taken


def _folder_evidence(path: str | None) -> tuple[list[str], list[str]]:
    if not path:
        return [], []
    parts = [p for p in PurePath(path).parts[:-1]]
    tokens = [(p, {t.lower() for t in _TOKEN.findall(p)}) for p in parts]
    ascend = [f"folder {p}/" for p, words in tokens if words & _ASCEND_FOLDERS]
    cuda = [f"folder {p}/" for p, words in tokens if words & _CUDA_FOLDERS]
    return ascend, cuda


# A literal each pattern's match contains: `in` (a fast substring scan) rules most patterns out before the
# regex runs (a pattern led by `\b` or an alternation scans the whole text slowly, on every keystroke).
_NEEDLES = {
    "imports torch_npu": ("torch_npu",),
    "uses triton.language.extra.cann": ("cann",),
    "uses triton.backends.ascend": ("backends.ascend",),
    'device="npu"': ("npu",),
    ".npu()": (".npu()",),
    'device="cuda"': ("cuda",),
    ".cuda()": (".cuda()",),
    "uses triton.language.extra.cuda": ("extra.cuda",),
    "uses TMA descriptors": ("TensorDescriptor", "make_tensor_descriptor", "_experimental_descriptor"),
    "inline PTX": ("inline_asm_elementwise",),
}


def _shows(source: str, pattern: re.Pattern[str], why: str) -> bool:
    needles = _NEEDLES.get(why)
    if needles is not None and not any(n in source for n in needles):
        return False
    return pattern.search(source) is not None


def decide(source: str, path: str | None = None) -> PlatformDecision:
    """The platforms a file is written for (see the module docstring for the evidence read). `path` is best
    given relative to the project root: the folders a clone happens to live in say nothing about its files."""
    ascend = [why for pattern, why in _ASCEND_TEXT if _shows(source, pattern, why)]
    cuda = [why for pattern, why in _CUDA_TEXT if _shows(source, pattern, why)]
    folder_ascend, folder_cuda = _folder_evidence(path)
    if not ascend and not cuda:  # folders decide only when the text says nothing
        ascend, cuda = folder_ascend, folder_cuda
    if ascend and cuda:
        return PlatformDecision(("cuda", "ascend"), tuple(ascend + cuda))
    if ascend:
        return PlatformDecision(("ascend",), tuple(ascend))
    if cuda:
        return PlatformDecision(("cuda",), tuple(cuda))
    return PlatformDecision(
        ("cuda",), ("no platform evidence: taken as upstream Triton (CUDA)",), assumed=True
    )


def resolve_target(target: str, source: str, path: str | None = None) -> tuple[str, ...]:
    """The platforms whose rules apply to this file under the `target` setting."""
    if target != "auto" and target in PLATFORM_SETTINGS:
        return PLATFORM_SETTINGS[target]
    return decide(source, path).platforms
