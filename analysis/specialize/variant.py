"""One variant of a kernel to compile: the argument types, constexpr values, hints and options, and where each
came from (`Specialization`), with the constants the specialization modules share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "multibuffer")
MAX_VARIANTS = 16
I32_MIN, I32_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True)
class Specialization:
    kernel: str
    label: str  # "launch at line 88", "autotune config 2", "recorded launch 1", "defaults"
    signature: dict[str, str]  # every param in order: "*fp16" | "i32" | "fp32" | "constexpr" ...
    constants: dict[str, Any]  # constexpr values and JIT constant specializations (value 1)
    divisibility: tuple[str, ...]  # args with tt.divisibility=16
    options: dict[str, Any]  # num_warps, num_stages, ...
    provenance: dict[str, str]  # arg -> "pragma line 12" / "launch at line 88" / "default" / "inferred ..."
    missing: tuple[str, ...] = ()  # constexpr args with no value: this variant cannot be compiled
    line: int | None = None  # source line of the launch / config it comes from (in this file)
    values_from: str = ""  # a launch in another file of the workspace it reads (`ops/wrapper.py:42`), if any
    # runtime ints the launch shows the value of but the JIT does not make constants (a stride of 7): what a
    # schedule may read, never part of what is compiled
    shown: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.missing

    def key(self) -> tuple[Any, ...]:
        """Identity of what would be compiled (labels and provenance aside)."""
        return (
            tuple(self.signature.items()),
            tuple(sorted((k, repr(v)) for k, v in self.constants.items())),
            self.divisibility,
            tuple(sorted((k, repr(v)) for k, v in self.options.items())),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "label": self.label,
            "signature": dict(self.signature),
            "constants": dict(self.constants),
            "divisibility": list(self.divisibility),
            "options": dict(self.options),
            "provenance": dict(self.provenance),
            "missing": list(self.missing),
            "line": self.line,
            "values_from": self.values_from,
            "shown": dict(self.shown),
        }


INT_TYPES = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})
# Provenance of an int compiled with tt.divisibility=16 although its value is not visible (pipeline.py keys on it).
ASSUMED_DIVISIBLE = "value unknown: compiled as a multiple of 16, the variant the JIT builds for most sizes"
