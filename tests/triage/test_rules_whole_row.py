"""TL139: a whole row of a large dimension in one block, by what the launch shows (known, unknown, capped)."""

from __future__ import annotations

from triage_helpers import locate, of

from tritonlens.analysis.core.findings import Severity

SAMPLE = """
import triton
import triton.language as tl

@triton.jit
def greedy(logits_ptr, out_ptr, V, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + row * stride + cols, mask=cols < V, other=-float("inf"))
    tl.store(out_ptr + row, tl.argmax(x, axis=0))

def sample(logits):
    rows, vocab = logits.shape
    out = logits.new_empty(rows)
    BLOCK = triton.next_power_of_2(vocab)
    greedy[(rows,)](logits, out, vocab, logits.stride(0), BLOCK=BLOCK)
"""


def test_tl139_silent_when_the_row_length_is_only_known_at_run_time() -> None:
    # the tutorial's next_power_of_2(n_cols) holds rows that fit; nothing shows this row is a vocabulary
    assert not of(SAMPLE, "TL139")


def test_tl139_warning_when_a_known_size_exceeds_the_registers() -> None:
    known = SAMPLE.replace("rows, vocab = logits.shape", "rows, vocab = logits.shape[0], 151936")
    (f,) = of(known, "TL139")
    assert f.span == locate(known, "tl.arange(0, BLOCK)")
    assert f.severity == Severity.WARNING and f.data["size"] == 262144 and f.data["per_thread"] == 2048
    literal = SAMPLE.replace("BLOCK=BLOCK)", "BLOCK=65536, num_warps=32)")
    (g,) = of(literal, "TL139")
    assert g.data["per_thread"] == 64 and g.severity == Severity.INFO  # 32 warps: fits the registers


def test_tl139_silent_for_small_known_rows_capped_blocks_and_column_loops() -> None:
    small = SAMPLE.replace("rows, vocab = logits.shape", "rows, vocab = logits.shape[0], 4096")
    assert not of(small, "TL139")
    capped = SAMPLE.replace("triton.next_power_of_2(vocab)", "min(triton.next_power_of_2(vocab), 4096)")
    assert not of(capped, "TL139")
    looped = SAMPLE.replace(
        "    cols = tl.arange(0, BLOCK)\n",
        "    for start in range(0, V, BLOCK):\n        cols = start + tl.arange(0, BLOCK)\n",
    ).replace("    x = tl.load", "        x = tl.load").replace("    tl.store(out_ptr", "        tl.store(out_ptr")
    assert not of(looped, "TL139")
    no_launch = SAMPLE.split("def sample")[0]
    assert not of(no_launch, "TL139")
