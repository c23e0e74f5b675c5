"""Parse Nsight Compute's per-source-line view (`ncu --import R.ncu-rep --page source --csv
--print-source=cuda,sass`) into per-line counters of a Triton kernel's Python source.

Layout, as ncu 2025.3 prints it: for each (file, function) a `"File Path",PATH` row, a `"Function Name",NAME`
row and a header row (`Line No, Source, Address, Source, <metrics>...`: the first Source is the Python line,
the second the SASS text); then one row per source line (Line No set) followed by its SASS rows (Line No
empty, Address set). Metrics are numbers, "-" for none, or per-kind lists such as "Global(8),Shared(4)".
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

STALL_SAMPLES = "Warp Stall Sampling (All Samples)"
STALL_NOT_ISSUED = "Warp Stall Sampling (Not-issued Samples)"
INSTRUCTIONS = "Instructions Executed"
L2_SECTORS = "L2 Theoretical Sectors Global"
L2_IDEAL = "L2 Theoretical Sectors Global Ideal"
L2_EXCESSIVE = "L2 Theoretical Sectors Global Excessive"
SHARED_WAVEFRONTS = "L1 Wavefronts Shared"
SHARED_EXCESSIVE = "L1 Wavefronts Shared Excessive"


class NcuParseError(ValueError):
    """The text is not an ncu source-page CSV; the message says what was expected."""


@dataclass
class NcuLine:
    file: str
    function: str
    line: int  # 1-based, in `file`
    source: str
    stall_samples: int = 0
    stall_not_issued: int = 0
    instructions: int = 0
    l2_sectors: int = 0
    l2_sectors_ideal: int = 0
    l2_sectors_excessive: int = 0
    shared_wavefronts: int = 0
    shared_excessive: int = 0
    access: str = ""  # e.g. "Global(8),Shared(4) Load(2),Store(10) 32(8),128(4)"
    stalls: dict[str, int] = field(
        default_factory=dict
    )  # stall reason -> samples (all samples), nonzero only
    sass: list[str] = field(default_factory=list)

    @property
    def excessive_fraction(self) -> float:
        return self.l2_sectors_excessive / self.l2_sectors if self.l2_sectors else 0.0


@dataclass
class NcuSourceView:
    lines: list[NcuLine]
    functions: list[str]

    def total_stall_samples(self) -> int:
        return sum(line.stall_samples for line in self.lines)

    def total_l2_sectors(self) -> int:
        return sum(line.l2_sectors for line in self.lines)

    def for_file(self, path: str) -> list[NcuLine]:
        """Lines of the user's file (ncu also lists Triton's own helpers, e.g. triton/language/standard.py).

        The profile may come from another host (a remote runner, a sandbox), where the same file sits under
        another folder: the file whose path shares the longest tail of components with `path` wins."""
        want = _parts(path)
        best, score = None, 0
        for name in {ln.file for ln in self.lines}:
            shared = _shared_tail(_parts(name), want)
            if shared > score:
                best, score = name, shared
        return [ln for ln in self.lines if ln.file == best] if best is not None else []


def _parts(path: str) -> list[str]:
    return [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]


def _shared_tail(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _number(text: str) -> int:
    """ncu numbers: "1,234", "-", "" or per-kind lists "Global(8)": the list forms are summed."""
    text = text.strip()
    if not text or text == "-":
        return 0
    try:
        return int(float(text.replace(",", "")))
    except ValueError:
        total = 0
        for part in text.split(","):
            if "(" in part and part.endswith(")"):
                try:
                    total += int(part[part.index("(") + 1 : -1])
                except ValueError:
                    pass
        return total


def parse_source_csv(text: str) -> NcuSourceView:
    rows = list(csv.reader(io.StringIO(text)))
    if not any(r and r[0] == "Line No" for r in rows):
        raise NcuParseError(
            "no 'Line No' header: expected `ncu --page source --csv --print-source=cuda,sass` output"
        )
    lines: list[NcuLine] = []
    functions: list[str] = []
    file = function = ""
    header: list[str] = []
    current: NcuLine | None = None
    for row in rows:
        if not row:
            continue
        if row[0] == "File Path" and len(row) > 1:
            file, current = row[1], None
            continue
        if row[0] == "Function Name" and len(row) > 1:
            function = row[1]
            if function not in functions:
                functions.append(function)
            continue
        if row[0] == "Line No":
            header = row
            continue
        if not header or len(row) < 4:
            continue
        values = dict(zip(header[4:], row[4:], strict=False))
        if row[0].strip().isdigit():
            current = NcuLine(file=file, function=function, line=int(row[0]), source=row[1].strip())
            current.stall_samples = _number(values.get(STALL_SAMPLES, ""))
            current.stall_not_issued = _number(values.get(STALL_NOT_ISSUED, ""))
            current.instructions = _number(values.get(INSTRUCTIONS, ""))
            current.l2_sectors = _number(values.get(L2_SECTORS, ""))
            current.l2_sectors_ideal = _number(values.get(L2_IDEAL, ""))
            current.l2_sectors_excessive = _number(values.get(L2_EXCESSIVE, ""))
            current.shared_wavefronts = _number(values.get(SHARED_WAVEFRONTS, ""))
            current.shared_excessive = _number(values.get(SHARED_EXCESSIVE, ""))
            access = [values.get(k, "-") for k in ("Address Space", "Access Operation", "Access Size")]
            current.access = " ".join(a for a in access if a and a != "-")
            current.stalls = {
                k.removeprefix("stall_"): _number(v)
                for k, v in values.items()
                if k.startswith("stall_") and "(Not Issued)" not in k and _number(v)
            }
            lines.append(current)
        elif current is not None and row[2].startswith("0x"):
            current.sass.append(row[3].strip())
    return NcuSourceView(lines=lines, functions=functions)
