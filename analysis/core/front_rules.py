"""Rules of the front end: the file could not be read as Python, a kernel could not be specialized, or an
ignore comment silences nothing."""

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
        name="assumed-specialization",
        title="Levels 3-4 compiled a kernel with assumed values: record real launches or pin them",
        level=Level.IR,
        severity=Severity.HINT,
        platforms=("cuda", "ascend"),
        rationale=(
            "Levels 3-4 compile the kernel exactly as the JIT would, which needs every `tl.constexpr` value "
            "(block sizes, flags, dtypes). tritonlens looks for them in launches recorded by `tritonlens record`, "
            "a `# tritonlens: NAME=VALUE` comment above the kernel, `[tool.tritonlens.kernels.<kernel>]` in "
            "pyproject.toml, launch sites in the file, `@triton.autotune` configs, `@triton.heuristics` and "
            "parameter defaults. When none gives a value it still compiles the most likely one (64 for sizes, "
            "False for flags, fp32 for dtypes, the first string a name is compared with); a finding that rests on "
            "such a guess is not shown (this hint lists it), the others say they hold for every value of it. Run `tritonlens record -- pytest ...` "
            "(or `-- python script.py`) to analyze real launches, or add the pragma the message shows."
        ),
        references=("https://triton-lang.org/main/python-api/generated/triton.jit.html",),
        escalates_to=Severity.INFO,
        escalation="when no variant can be compiled at all (a value is missing, not guessed)",
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

IMPORT_FAILED = register(
    Rule(
        code="TL004",
        name="import-failed-in-runner",
        title="An import of the file failed in the runner environment",
        level=Level.IR,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "Levels 3-4 run the file as a module of its package in a runner environment (upstream Triton, or "
            "triton-ascend), with the package root and the workspace root on `sys.path`, so it imports what it "
            "imports for you. This import raised there; the exception is in the message. Names it binds are "
            "missing, so a kernel that needs them cannot be compiled. Usually the runner environment lacks a "
            "package (install it there) or the import needs a device (guard it)."
        ),
        lowers_to=Severity.INFO,
        lowering="when the kernel compiled without the failed import",
    )
)

NOT_ANALYZED = register(
    Rule(
        code="TL005",
        name="ir-analysis-did-not-run",
        title="Levels 3-4 could not analyze this kernel",
        level=Level.IR,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "The runner could not load or compile the kernel for a reason that is not a compile error of the "
            "kernel itself (a failed import, a worker crash, a kernel the module does not define when run). "
            "The message says why; nothing about the compiled code is known until it is fixed."
        ),
    )
)

UNUSED_IGNORE = register(
    Rule(
        code="TL006",
        name="unused-ignore",
        title="A `# tritonlens: ignore[...]` comment silences nothing",
        level=Level.TRIAGE,
        severity=Severity.HINT,
        platforms=("cuda", "ascend"),
        rationale=(
            "An ignore comment names a level-1 code that no finding on its line (or, for `ignore-file`, in its "
            "file) has, or a code no rule has: the problem it silenced was fixed, or the code is misspelt. "
            "Remove it (the quick fix does) so that the next real finding there is not hidden. Codes of later "
            "levels (TL2xx-TL4xx) are never reported as unused: their findings appear only after a profile or "
            "a compile."
        ),
        has_fix=True,
    )
)
