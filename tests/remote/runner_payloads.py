"""Hypothesis strategies for runner payloads: job envelopes and compile/run/profile/verify requests, built from valid
skeletons with fields replaced by hostile values (weird floats, huge integers, paths out of the job's folder, odd
types, long strings, deep nesting). Shared by the validator and the live-service fuzz tests."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import strategies as st

LONG = os.environ.get("TRITONLENS_FUZZ", "").lower() == "long"
HANG_S = 10.0  # any single request slower than this counts as a hang

WEIRD_FLOATS = st.sampled_from(
    [
        float("nan"),
        float("inf"),
        float("-inf"),
        -0.0,
        1e308,
        -1e308,
        5e-324,
        1e-300,
        0.0,
        -1.0,
        3600.0,
        3601.0,
    ]
)
HUGE_INTS = st.sampled_from([0, -1, 1, 2**31, 2**63, 10**400, -(10**40)])
PATHS = st.sampled_from(
    [
        "/etc/passwd",
        "../../etc/passwd",
        "a/../../b",
        "./k.py",
        "k.py",
        "sub/dir/k.py",
        "",
        "/",
        "~/x",
        "\0evil",
        "a" * 5000,
        "/proc/self/environ",
        "C:\\windows\\x",
        "snap\\..\\..\\x",
        "ünïcode/ファイル.py",
    ]
)
TEXT = st.one_of(st.text(max_size=40), st.sampled_from(["", "x" * 20000, "import os\nos._exit(3)\n"]))
SCALAR = st.one_of(st.none(), st.booleans(), HUGE_INTS, WEIRD_FLOATS, st.floats(), TEXT, PATHS)
JSONISH = st.recursive(
    SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

HARNESS = st.fixed_dictionaries(
    {"mode": st.sampled_from(["script", "kernelbench", "entry", "bogus"]), "path": PATHS},
    optional={"source": st.one_of(st.none(), TEXT), "entry": TEXT, "argv": st.lists(TEXT, max_size=3)},
)
TIMING = st.fixed_dictionaries(
    {}, optional={"warmup_ms": WEIRD_FLOATS, "rep_ms": st.one_of(WEIRD_FLOATS, TEXT)}
)
FILES = st.dictionaries(st.one_of(PATHS, st.text(max_size=12)), TEXT, max_size=3)

RUN_PAYLOAD = st.fixed_dictionaries(
    {"harness": HARNESS},
    optional={
        "record": st.booleans(),
        "snapshot": st.booleans(),
        "artifacts_dir": PATHS,
        "time_launches": st.booleans(),
        "max_launches": st.one_of(HUGE_INTS, WEIRD_FLOATS),
        "seed": st.one_of(HUGE_INTS, WEIRD_FLOATS, TEXT),
        "timing": TIMING,
        "replay": st.one_of(
            st.none(), st.fixed_dictionaries({"snapshot": PATHS}, optional={"verify": SCALAR})
        ),
        "measure_ceilings": st.booleans(),
        "ncu": st.booleans(),
        "ncu_timeout_s": WEIRD_FLOATS,
        "files": FILES,
        "workdir": PATHS,
        "unknown_field": JSONISH,
    },
)
VERIFY_PAYLOAD = st.fixed_dictionaries(
    {"harness": HARNESS},
    optional={
        "seeds": st.one_of(st.lists(st.one_of(HUGE_INTS, WEIRD_FLOATS), max_size=4), JSONISH),
        "candidate": TEXT,
        "reference": TEXT,
        "atol": st.one_of(st.none(), WEIRD_FLOATS),
        "rtol": st.one_of(st.none(), WEIRD_FLOATS),
        "timing": TIMING,
        "shapes": st.one_of(st.lists(JSONISH, max_size=3), JSONISH),
        "interleave": st.one_of(st.none(), JSONISH, st.fixed_dictionaries({"repeats": SCALAR})),
        "files": FILES,
    },
)
COMPILE_PAYLOAD = st.fixed_dictionaries(
    {
        "source": st.one_of(TEXT, st.just("import triton\n@triton.jit\ndef k(x):\n    pass\n")),
        "path": PATHS,
        "kernel": st.one_of(st.just("k"), TEXT),
        "signature": st.one_of(
            st.dictionaries(st.text(max_size=4), st.sampled_from(["i32", "*fp32", "constexpr"]), max_size=3),
            JSONISH,
        ),
    },
    optional={
        "constants": st.one_of(st.dictionaries(st.text(max_size=4), SCALAR, max_size=3), JSONISH),
        "divisibility": st.one_of(st.lists(st.text(max_size=4), max_size=3), JSONISH),
        "target": st.sampled_from(["sm_90", "sm_80", "ascend910b3", "sm_1", "", "x" * 100]),
        "options": st.one_of(
            st.dictionaries(st.sampled_from(["num_warps", "num_stages"]), SCALAR, max_size=2), JSONISH
        ),
        "files": FILES,
        "workdir": PATHS,
    },
)
PAYLOAD_BY_KIND = {
    "compile": COMPILE_PAYLOAD,
    "run": RUN_PAYLOAD,
    "profile": RUN_PAYLOAD,
    "verify": VERIFY_PAYLOAD,
}


@st.composite
def envelopes(draw: Any) -> dict[str, Any]:
    """A job envelope: mostly well-formed around a fuzzed payload, sometimes broken itself."""
    kind = draw(st.sampled_from([*PAYLOAD_BY_KIND, "record", "health", "_fault", ""]))
    payload = draw(PAYLOAD_BY_KIND.get(kind, JSONISH))
    job: dict[str, Any] = {
        "schema": draw(st.one_of(st.just(1), SCALAR)),
        "id": draw(st.one_of(st.from_regex(r"\A[A-Za-z0-9_-]{1,64}\Z"), TEXT)),
        "kind": kind,
        "backend": draw(st.sampled_from(["interpret", "cuda", "npu", "ascend", "gpu", ""])),
        "payload": payload,
    }
    if draw(st.booleans()):
        job["timeout_s"] = draw(st.one_of(WEIRD_FLOATS, HUGE_INTS, TEXT, st.floats(0.1, 5)))
    if draw(st.integers(0, 9)) == 0:
        job[draw(st.text(min_size=1, max_size=6))] = draw(JSONISH)
    if draw(st.integers(0, 19)) == 0:
        del job[draw(st.sampled_from(sorted(job)))]
    return job


SAFE_PATHS = st.sampled_from(["k.py", "sub/k.py", "out", "snap/launch000_k.pt"])
SMALL_SOURCES = st.sampled_from(
    [
        "",
        "print('hello')\n",
        "import helpers\n",
        "raise SystemExit(3)\n",
        "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, B: tl.constexpr):\n    pass\n",
    ]
)


@st.composite
def plausible_envelopes(draw: Any) -> dict[str, Any]:
    """Well-formed jobs with small hostile twists (paths, files, numbers at their limits): these get past the
    validators and reach the job board, the job folders and real workers."""
    kind = draw(st.sampled_from(["compile", "run", "profile", "verify"]))
    source = draw(SMALL_SOURCES)
    files = draw(st.dictionaries(SAFE_PATHS, SMALL_SOURCES, max_size=2))
    harness = {"mode": draw(st.sampled_from(["script", "kernelbench", "entry"])), "path": draw(SAFE_PATHS)}
    harness["source"] = source
    if harness["mode"] == "entry":
        harness["entry"] = draw(st.sampled_from([":main", "helpers:run", "os:getcwd"]))
    if kind == "compile":
        payload: dict[str, Any] = {
            "source": source,
            "path": draw(st.sampled_from(["/client/k.py", "k.py"])),
            "kernel": "k",
            "signature": {"x_ptr": "*fp32", "B": "constexpr"},
            "constants": {"B": draw(st.sampled_from([1, 16, 1024, 2**31]))},
            "target": draw(st.sampled_from(["sm_90", "sm_80", "ascend910b3"])),
            "files": files,
        }
    else:
        payload = {"harness": harness, "files": files, "timing": {"warmup_ms": 0.0, "rep_ms": 1.0}}
        if kind == "verify":
            harness["mode"] = "kernelbench"
            payload["seeds"] = draw(st.lists(st.integers(0, 2**31), min_size=1, max_size=3))
        else:
            payload["artifacts_dir"] = draw(SAFE_PATHS)
            payload["max_launches"] = draw(st.integers(1, 2**31))
            if draw(st.booleans()):
                payload["replay"] = {"snapshot": draw(SAFE_PATHS)}
    job = {
        "schema": 1,
        "id": "fuzz",
        "kind": kind,
        "backend": draw(st.sampled_from(["interpret", "cuda", "npu"])),
        "payload": payload,
    }
    if draw(st.booleans()):
        job["timeout_s"] = draw(st.floats(0.05, 3600))
    return job
