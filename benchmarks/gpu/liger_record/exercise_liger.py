"""Exercise a handful of Liger-Kernel ops (forward and backward) so `tritonlens record` sees their real launches.

Our own driver script, not Liger's code: it imports the public `liger_kernel.ops` Function classes from a Liger
checkout on PYTHONPATH (see run_liger_record.sh) and calls each once with small, typical LLM shapes. On a GPU the
launches are the kernels' real ones (Liger's own block sizes, warps, dtypes); on the CPU it runs under
TRITON_INTERPRET=1 with smaller shapes.
"""

from __future__ import annotations

import sys

import torch

CUDA = torch.cuda.is_available()
DEV = "cuda" if CUDA else "cpu"
DT = torch.bfloat16 if CUDA else torch.float32
ROWS, HIDDEN, VOCAB = (4096, 4096, 32000) if CUDA else (8, 64, 128)


def _run(name: str, fn) -> bool:
    try:
        fn()
        print(f"ok   {name}")
        return True
    except Exception as exc:  # one op failing must not hide the others' launches
        print(f"FAIL {name}: {type(exc).__name__}: {str(exc)[:200]}")
        return False


def _x(*shape: int, dtype: torch.dtype = DT) -> torch.Tensor:
    return torch.randn(*shape, device=DEV, dtype=dtype, requires_grad=True)


def rms_norm() -> None:
    from liger_kernel.ops import LigerRMSNormFunction

    y = LigerRMSNormFunction.apply(_x(ROWS, HIDDEN), _x(HIDDEN), 1e-6)
    y.sum().backward()


def layer_norm() -> None:
    from liger_kernel.ops import LigerLayerNormFunction

    y = LigerLayerNormFunction.apply(_x(ROWS, HIDDEN), _x(HIDDEN), _x(HIDDEN), 1e-5)
    y.sum().backward()


def swiglu() -> None:
    from liger_kernel.ops import LigerSiLUMulFunction

    y = LigerSiLUMulFunction.apply(_x(ROWS, HIDDEN), _x(ROWS, HIDDEN))
    y.sum().backward()


def geglu() -> None:
    from liger_kernel.ops import LigerGELUMulFunction

    y = LigerGELUMulFunction.apply(_x(ROWS, HIDDEN), _x(ROWS, HIDDEN))
    y.sum().backward()


def softmax() -> None:
    from liger_kernel.ops import LigerSoftmaxFunction

    y = LigerSoftmaxFunction.apply(_x(ROWS, 1024))
    y.sum().backward()


def cross_entropy() -> None:
    from liger_kernel.ops import LigerCrossEntropyFunction

    rows = ROWS // 4
    logits = _x(rows, VOCAB)
    target = torch.randint(0, VOCAB, (rows,), device=DEV)
    out = LigerCrossEntropyFunction.apply(logits, target, None)
    loss = out[0] if isinstance(out, tuple) else out
    loss.backward()


def rope() -> None:
    from liger_kernel.ops import LigerRopeFunction

    bsz, heads, seq, dim = (2, 32, 512, 128) if CUDA else (1, 2, 8, 16)
    q, k = _x(bsz, heads, seq, dim), _x(bsz, heads, seq, dim)
    cos, sin = torch.randn(1, seq, dim, device=DEV, dtype=DT), torch.randn(1, seq, dim, device=DEV, dtype=DT)
    q2, k2 = LigerRopeFunction.apply(q.transpose(1, 2).contiguous().transpose(1, 2), k, cos, sin)
    (q2.sum() + k2.sum()).backward()


def dyt() -> None:
    from liger_kernel.ops import LigerDyTFunction

    y = LigerDyTFunction.apply(_x(ROWS, HIDDEN), _x(1), _x(HIDDEN), _x(HIDDEN))
    y.sum().backward()


def main() -> int:
    ops = [rms_norm, layer_norm, swiglu, geglu, softmax, cross_entropy, rope, dyt]
    ok = sum(_run(op.__name__, op) for op in ops)
    if CUDA:
        torch.cuda.synchronize()
    print(f"{ok}/{len(ops)} ops ran on {DEV}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
