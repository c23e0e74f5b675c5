"""Issue 14 items 2 and 9: hostile constants are bounded, huge literals keep their findings, files are read as
Python reads them, and a request about a document that is not open answers a sentence."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tritonlens.analysis.source.numbers import data_number, number_text
from tritonlens.analysis.source.safe_eval import MAX_BITS, UNKNOWN, evaluate
from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.findings import specialization_findings
from tritonlens.analysis.triage import triage
from tritonlens.server.source_files import UnreadableSource, decode_python_source, read_python_source


def finishes(fn, seconds: float = 60.0):
    """Run `fn` in a thread; a hang detector (not a timing test): fails only if it never returns."""
    out: list[object] = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{fn} did not finish within {seconds} s"
    return out[0]


@pytest.mark.parametrize(
    "expr",
    [
        "(((3**128)**128)**128)**128",
        "((2**100)**100)**100",
        "(10**100) ** 100 * 7",
        "1 << 128 << 128 << 128 << 128 << 128 << 128 << 128 << 128 << 128 << 128 << 128 << 128 << 128 << 128",
        "'x' * 10**9",
        "(0,) * 10**8",
        "[1, 2] * 10**8",
        "'%0999999999d' % 1",
        "'ab' + 'c' * 9999",
        "max((1,) * 10**9)",
        "-(" * 200 + "1" + ")" * 200,
    ],
)
def test_evaluator_bounds_results_not_only_exponents(expr: str):
    assert finishes(lambda: evaluate(ast.parse(expr, mode="eval").body, {})) is UNKNOWN


def test_evaluator_still_computes_launch_values():
    env = {"N": 4096}
    assert evaluate(ast.parse("triton.next_power_of_2(N) // 2 ** 3", mode="eval").body, env) == 512
    assert evaluate(ast.parse("2 ** 62 + 1", mode="eval").body, {}) == 2**62 + 1
    assert evaluate(ast.parse("'ab' * 3", mode="eval").body, {}) == "ababab"
    assert (1 << MAX_BITS).bit_length() > MAX_BITS  # the bound is in bits


HOSTILE_LAUNCH = """import triton
import triton.language as tl

C = (((3**128)**128)**128)**128
D = 'x' * 10**9


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr, S: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


def run(x):
    k[(C,)](x, BLOCK=C, S=D)
"""


def test_hostile_constants_at_a_launch_site_finish():
    specs = finishes(lambda: specializations(HOSTILE_LAUNCH, "k"))
    finishes(lambda: specialization_findings(HOSTILE_LAUNCH, "k", specs))
    finishes(lambda: triage(HOSTILE_LAUNCH, "hostile.py", strict=True))


BIG = "9" * 4300
BIG_SOURCE = f"""import triton
import triton.language as tl

X = {BIG}


@triton.jit
def k(x_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < N) + {BIG}, mask=offs < N)


def run(x):
    k[({BIG}, {BIG}, {BIG})](x, {BIG}, BLOCK={BIG}, num_warps={BIG})
"""


def test_a_4300_digit_literal_keeps_its_findings():
    result = triage(BIG_SOURCE, "big.py", strict=True)  # strict: a rule that raises fails this test
    codes = {f.code for f in result.findings}
    assert "TL102" in codes  # the block is not a power of two
    pow2 = next(f for f in result.findings if f.code == "TL102")
    assert "9.99e+4299 (4,300 digits)" in pow2.message and pow2.fix is None
    json.dumps([f.to_dict() for f in result.findings])  # finding data serialises too


def test_number_text_and_data_number():
    assert number_text(123) == "123" and number_text(-(10**30)) == "-1.00e+30 (31 digits)"
    assert data_number(2**63) == number_text(2**63) and data_number(2**62) == 2**62
    assert number_text(int(BIG)) == "9.99e+4299 (4,300 digits)"


LATIN1 = (
    b"# -*- coding: latin-1 -*-\nimport triton\nimport triton.language as tl\n# caf\xe9 \xe0 la cr\xe8me\n\n\n"
    b"@triton.jit\ndef k(X, N, BLOCK: tl.constexpr):\n"
    b"    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    b"    tl.store(X + offs, tl.load(X + offs, mask=offs < N), mask=offs < N)\n\n\n"
    b"def run(x):\n    k[(1,)](x, 10, BLOCK=100)\n"
)


def test_files_are_decoded_as_python_decodes_them(tmp_path: Path):
    compile(LATIN1, "latin.py", "exec")  # Python accepts it
    path = tmp_path / "latin.py"
    path.write_bytes(LATIN1)
    assert "café à la crème" in read_python_source(path)
    assert decode_python_source(b"\xef\xbb\xbfx = 1\n")[0] == "x = 1\n"
    with pytest.raises(UnreadableSource):
        decode_python_source(b"# coding: no-such-codec\nx = 1\n")
    with pytest.raises(UnreadableSource):
        decode_python_source(b"x = '\xe9'\n")  # not UTF-8 and no declaration: Python rejects it too
    cli = subprocess.run(
        [sys.executable, "-m", "tritonlens.server.cli", "check", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "cannot read" not in cli.stderr
    assert "TL102" in cli.stdout


def test_ir_request_on_a_document_that_is_not_open():
    from raw_lsp import RawServer

    server = RawServer()
    try:
        assert server.initialize() is not None
        params = {"uri": "file:///nowhere/not_open.py", "kernel": "k", "stage": "ttir", "target": "sm_90"}
        reply = server.request("tritonlens/ir", params, timeout=60)
        assert reply is not None, "no answer"
        body = json.dumps(reply)
        assert "Traceback" not in body and "traceback" not in body
        error = (reply.get("result") or {}).get("error") or reply.get("error", {}).get("message")
        assert error and "not open" in error
    finally:
        server.close()


@pytest.mark.parametrize(
    "value",
    ["-" * 100_000 + "1", "1" + "+1" * 100_000, "[" * 50_000, "1e999", "[1, -1e999]", "9" * 5_000],
)
def test_hostile_pragma_values_are_pragma_problems(value: str):
    # Deep nesting made Python's parser raise MemoryError/RecursionError out of the specialization (found by
    # the class sweep of item 2); an infinity passed as a value.
    source = (
        "import triton\nimport triton.language as tl\n"
        f"# tritonlens: BLOCK={value}\n"
        "@triton.jit\ndef k(X, BLOCK: tl.constexpr):\n    pass\n\n\n"
        "def run(x):\n    k[(1,)](x, BLOCK=64)\n"
    )
    found = finishes(lambda: specialization_findings(source, "k", specializations(source, "k")))
    assert [f.code for f in found] == ["TL003"] and "BLOCK" in found[0].message
    assert len(found[0].message) < 200  # the value is not echoed in full


def test_only_regular_files_of_a_sane_size_are_read(tmp_path: Path):
    # Class sweep of items 2/9 (bounded reads): `check` on a FIFO named *.py blocked forever, on a symlink to
    # /dev/zero it filled memory; the workspace index reads every .py of the workspace the same way.
    import os

    from tritonlens.server.source_files import MAX_SOURCE_BYTES

    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "dir.py").mkdir()
    with open(tmp_path / "huge.py", "wb") as fh:
        fh.truncate(MAX_SOURCE_BYTES + 1)  # sparse: no disk used
    (tmp_path / "ok.py").write_text("x = 1\n")
    for name, why in [
        ("fifo.py", "not a regular file"),
        ("zero.py", "not a regular file"),
        ("dir.py", "a folder"),
        ("huge.py", "larger than"),
    ]:
        refused = finishes(lambda n=name: _raised(lambda: read_python_source(tmp_path / n)), 30)
        assert isinstance(refused, UnreadableSource) and why in str(refused), (name, refused)
    assert read_python_source(tmp_path / "ok.py") == "x = 1\n"
    proc = subprocess.run(
        [sys.executable, "-m", "tritonlens.server.cli", "check", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "fifo.py: not a regular file" in proc.stderr and "in 1 file(s)" in proc.stdout + proc.stderr


def _raised(fn) -> BaseException | None:
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - handed back to the test
        return exc
    return None
