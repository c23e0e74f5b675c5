"""Rules of the front end: the file could not be read as Python, or a kernel could not be specialized."""

from .findings import Level, Severity
from .rules import Rule, register

SYNTAX_ERROR = register(
    Rule(
        code="TL001",
        name="syntax-error",
        title="The file does not parse as Python",
        level=Level.TRIAGE,
        severity=Severity.ERROR,
        platforms=("cuda", "ascend"),
        rationale=(
            "The Python parser stopped here, so no kernel in this file can be analyzed until it parses. "
            "Findings from the last version that parsed are not shown, to avoid pointing at moved lines."
        ),
    )
)

CANNOT_SPECIALIZE = register(
    Rule(
        code="TL002",
        name="cannot-specialize",
        title="A kernel cannot be compiled for IR analysis: a constexpr has no known value",
        level=Level.IR,
        severity=Severity.INFO,
        platforms=("cuda", "ascend"),
        rationale=(
            "Levels 3-4 compile the kernel exactly as the JIT would, which needs every `tl.constexpr` value "
            "(block sizes, flags). tritonlens looks for them in launches recorded by a runner, a "
            "`# tritonlens: NAME=VALUE` comment above the kernel, `[tool.tritonlens.kernels.<kernel>]` in "
            "pyproject.toml, launch sites in the file, `@triton.autotune` configs, `@triton.heuristics` and "
            "parameter defaults. When none gives a value, add the pragma the message shows, e.g. "
            "`# tritonlens: BLOCK_SIZE=1024`; pointer dtypes can be pinned the same way (`x_ptr=*fp16`)."
        ),
        references=("https://triton-lang.org/main/python-api/generated/triton.jit.html",),
    )
)

BAD_OVERRIDE = register(
    Rule(
        code="TL003",
        name="bad-specialization-override",
        title="A `# tritonlens:` pragma or pyproject override cannot be used",
        level=Level.IR,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "The override is not `NAME=VALUE` with a Python literal or a Triton type (`*fp16`, `i32`), or it "
            "names something that is not a parameter of the kernel (nor `num_warps` / `num_stages`). It is "
            "ignored; fix the spelling so the kernel compiles with the values you meant."
        ),
    )
)
