"""`tritonlens check` text output: info/hint findings are marked (` [info]`, ` [hint]`) at the end of the
required `path:line:col: CODE message` line; `--min-severity` hides lower findings and sets the exit status."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# One of each severity on triage alone: TL102 error, TL106 warning, TL113 info, TL120 hint (Ascend launch, hence --target both).
KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def scaled_sum(x_ptr, out_ptr, scale_ptr, n, BLOCK: tl.constexpr):
    offs = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in range(4):
        s = tl.load(scale_ptr)
        acc += tl.load(x_ptr + offs, mask=offs < n) * s
    tl.store(out_ptr + offs, acc, mask=offs < n)


def launch(x, out, s, n):
    scaled_sum[(64,)](x, out, s, n, BLOCK=1000, num_warps=4)
"""

LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>TL\d{3}) (?P<message>.+)$")


@pytest.fixture
def kernel_file(tmp_path: Path) -> Path:
    path = tmp_path / "scaled_sum.py"
    path.write_text(KERNEL)
    return path


def parsed(out: str) -> list[re.Match[str]]:
    lines = [ln for ln in out.splitlines() if ln]
    matches = [LINE.match(ln) for ln in lines]
    assert all(matches), lines  # every line keeps the compiler-style format
    return [m for m in matches if m]


def severities(cli, path: Path) -> dict[str, str]:
    return {f["code"]: f["severity"] for f in cli("check", "--target", "both", "--format", "json", str(path)).json()}


def test_info_and_hint_are_marked_warnings_and_errors_are_not(cli, kernel_file: Path) -> None:
    by_code = severities(cli, kernel_file)
    assert {"error", "warning", "info", "hint"} <= set(by_code.values())
    result = cli("check", "--target", "both", str(kernel_file))
    assert result.rc == 1
    lines = parsed(result.out)
    assert {m["code"] for m in lines} == set(by_code)
    for m in lines:
        marker = re.search(r" \[(info|hint)\]$", m["message"])
        severity = by_code[m["code"]]
        if severity in ("info", "hint"):
            assert marker and marker[1] == severity, m.group(0)
        else:
            assert marker is None, m.group(0)
        assert m["path"] == str(kernel_file) and int(m["line"]) >= 1 and int(m["col"]) >= 1


@pytest.mark.parametrize(
    ("minimum", "kept"),
    [
        ("hint", {"error", "warning", "info", "hint"}),
        ("info", {"error", "warning", "info"}),
        ("warning", {"error", "warning"}),
        ("error", {"error"}),
    ],
)
def test_min_severity_filters_text_and_json(cli, kernel_file: Path, minimum: str, kept: set[str]) -> None:
    by_code = severities(cli, kernel_file)
    text = cli("check", "--target", "both", "--min-severity", minimum, str(kernel_file))
    assert text.rc == 1  # the error is always at or above the threshold
    assert {by_code[m["code"]] for m in parsed(text.out)} == kept
    data = cli("check", "--target", "both", "--min-severity", minimum, "--format", "json", str(kernel_file)).json()
    assert {f["severity"] for f in data} == kept


def test_exit_status_follows_min_severity(cli, tmp_path: Path) -> None:
    # the kernel without the bad BLOCK and the GPU-only launch option: warnings and info remain
    path = tmp_path / "no_error.py"
    path.write_text(KERNEL.replace("BLOCK=1000, num_warps=4", "BLOCK=1024"))
    kinds = set(severities(cli, path).values())
    assert "error" not in kinds and "warning" in kinds and "info" in kinds
    assert cli("check", "--target", "both", str(path)).rc == 1
    assert cli("check", "--target", "both", "--min-severity", "warning", str(path)).rc == 1
    quiet = cli("check", "--target", "both", "--min-severity", "error", str(path))
    assert quiet.rc == 0 and quiet.out == ""
    assert "not shown" in quiet.err
    # only an info finding left: shown, but a linter's exit status (0) unless --fail-on asks for info
    only_info = cli("check", "--target", "both", "--select", "TL113", str(path))
    assert only_info.rc == 0 and "TL113" in only_info.out
    assert cli("check", "--target", "both", "--select", "TL113", "--fail-on", "info", str(path)).rc == 1
    assert cli("check", "--target", "both", "--select", "TL113", "--fail-on", "hint", str(path)).rc == 1
    infos = cli("check", "--target", "both", "--select", "TL113", "--min-severity", "warning", str(path))
    assert infos.rc == 0 and infos.out == ""
    # warnings fail by default, not when only errors fail the run
    assert cli("check", "--target", "both", "--fail-on", "error", str(path)).rc == 0


def test_bad_fail_on_and_missing_file_are_usage_errors(cli, kernel_file: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        cli("check", "--fail-on", "loud", str(kernel_file))
    assert exc.value.code == 2
    assert cli("check", str(tmp_path / "missing.py")).rc == 2


def test_unknown_min_severity_is_a_usage_error(cli, kernel_file: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        cli("check", "--target", "both", "--min-severity", "loud", str(kernel_file))
    assert exc.value.code == 2
