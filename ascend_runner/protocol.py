"""The versioned job schema shared by local and remote runners (plain JSON; no triton/torch imports).

A job is {"schema": SCHEMA_VERSION, "id", "kind", "backend", "payload"}; a result is
{"schema", "id", "ok", "kind", "result" | "error"}. Payload and result shapes per kind are the dataclasses
below; they round-trip through to_dict/from_dict and are validated on entry to a runner.
"""

from __future__ import annotations

import dataclasses
import math
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1
JOB_KINDS = ("compile", "run", "profile", "verify", "record")
BACKENDS = ("cuda", "ascend", "npu", "interpret")
# Targets a compile job accepts: CUDA compute capabilities and Ascend SoCs.
CUDA_TARGETS = {"sm_80": 80, "sm_86": 86, "sm_89": 89, "sm_90": 90, "sm_100": 100}
ASCEND_TARGETS = ("ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4", "ascend910_9391", "ascend950")


_HEX64 = re.compile(r"[0-9a-f]{64}")
MAX_KEPT_REFERENCES = 16  # kept reference outputs one verify request may name

class ProtocolError(ValueError):
    """A request that does not follow the schema; the message says which field and why."""


def _require(raw: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in raw:
        raise ProtocolError(f"missing field {key!r}")
    value = raw[key]
    if not isinstance(value, kind):
        raise ProtocolError(f"field {key!r} has type {type(value).__name__}")
    return value


@dataclass
class CompileRequest:
    source: str  # full text of the (possibly unsaved) buffer
    path: str  # for messages and source locations only; the runner never reads it
    kernel: str  # name of the @triton.jit function in source
    signature: dict[str, str]  # arg -> "*fp32" | "i32" | "fp32" | "constexpr" ... in Triton's spelling
    constants: dict[str, Any] = field(default_factory=dict)  # constexpr (and specialized) values
    divisibility: list[str] = field(default_factory=list)  # args known divisible by 16 (pointers: aligned)
    target: str = "sm_90"
    options: dict[str, Any] = field(default_factory=dict)  # num_warps, num_stages, ...
    # The user's own modules the buffer imports ({path relative to its folder: text}), for a runner that cannot
    # see the user's disk; a runner service writes them into the job's folder.
    files: dict[str, str] = field(default_factory=dict)
    workdir: str = ""  # runner-side folder the buffer's imports resolve in (set by the runner service only)
    # An LLM's text: its module-level code runs only in a confined fresh worker (worker/main.py), or, where no
    # sandbox can start, only if the user opted in.
    untrusted: bool = False
    allow_unsandboxed: bool = False

    def validate(self) -> None:
        check_files(self.files)
        if not isinstance(self.signature, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.signature.items()
        ):
            raise ProtocolError("signature must map argument names to type strings")
        if not isinstance(self.divisibility, list) or not all(isinstance(d, str) for d in self.divisibility):
            raise ProtocolError("divisibility must be a list of argument names")
        for what in ("constants", "options"):
            value = getattr(self, what)
            if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
                raise ProtocolError(f"{what} must be an object keyed by names")
        if not isinstance(self.kernel, str) or not isinstance(self.target, str):
            raise ProtocolError("kernel and target must be text")
        if not self.kernel.isidentifier():
            raise ProtocolError(f"kernel {self.kernel!r} is not an identifier")
        if self.target not in CUDA_TARGETS and self.target not in ASCEND_TARGETS:
            raise ProtocolError(f"unknown target {self.target!r}")
        unknown = set(self.divisibility) - set(self.signature)
        if unknown:
            raise ProtocolError(f"divisibility names unknown arguments {sorted(unknown)}")


@dataclass
class StageError:
    stage: str  # "frontend" | "ttir" | "ttgir" | "llir" | "ptx" | "ptxas" | "ttadapter" | "npubin" | "worker"
    message: str
    line: int | None = None  # 1-based line in the request's source
    col: int | None = None


@dataclass
class CompileResult:
    ok: bool
    target: str
    stages: dict[str, str] = field(default_factory=dict)  # stage name -> text, in pipeline order
    metadata: dict[str, Any] = field(default_factory=dict)  # compiler metadata (num_warps, shared, ...)
    resources: dict[str, Any] = field(default_factory=dict)  # registers, spill_stores, stack, shared, ...
    errors: list[StageError] = field(default_factory=list)
    compiler: str = ""  # e.g. "triton 3.6.0" / "triton-ascend 3.2.0"
    elapsed_s: float = 0.0
    cached: bool = False


def check_files(files: Any) -> None:
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise ProtocolError("files must map relative file names to text")


def check_numbers(obj: Any, what: str) -> None:
    """Every float/int field of a payload dataclass has a finite number of the right type."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        if kind.startswith("float"):
            if value is None and "None" in kind:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ProtocolError(f"{what}.{f.name} must be a finite number, not {value!r}")
        elif kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
            raise ProtocolError(f"{what}.{f.name} must be an integer, not {value!r}")


def new_job(kind: str, backend: str, payload: Any) -> dict[str, Any]:
    if kind not in JOB_KINDS:
        raise ProtocolError(f"unknown job kind {kind!r}")
    if backend not in BACKENDS:
        raise ProtocolError(f"unknown backend {backend!r}")
    body = dataclasses.asdict(payload) if dataclasses.is_dataclass(payload) else dict(payload)
    return {
        "schema": SCHEMA_VERSION,
        "id": uuid.uuid4().hex,
        "kind": kind,
        "backend": backend,
        "payload": body,
    }


def check_job(raw: Any) -> dict[str, Any]:
    """Validate the envelope of a job; the payload is validated by its kind's handler."""
    if not isinstance(raw, dict):
        raise ProtocolError("a job must be a JSON object")
    if _require(raw, "schema", int) != SCHEMA_VERSION:
        raise ProtocolError(f"schema {raw['schema']} is not supported (this runner speaks {SCHEMA_VERSION})")
    _require(raw, "id", str)
    if _require(raw, "kind", str) not in JOB_KINDS:
        raise ProtocolError(f"unknown job kind {raw['kind']!r}")
    if _require(raw, "backend", str) not in BACKENDS:
        raise ProtocolError(f"unknown backend {raw['backend']!r}")
    _require(raw, "payload", dict)
    return raw


def compile_request_from(raw: dict[str, Any]) -> CompileRequest:
    try:
        req = CompileRequest(**raw)
    except TypeError as exc:
        raise ProtocolError(f"bad compile payload: {exc}") from None
    for key, kind in (
        ("source", str),
        ("path", str),
        ("kernel", str),
        ("signature", dict),
        ("target", str),
        ("constants", dict),
        ("divisibility", list),
        ("options", dict),
        ("workdir", str),
    ):
        if not isinstance(getattr(req, key), kind):
            raise ProtocolError(f"field {key!r} must be {kind.__name__}")
    req.validate()
    return req


def compile_result_from(raw: dict[str, Any]) -> CompileResult:
    errors = [StageError(**e) for e in raw.get("errors", [])]
    return CompileResult(**{**raw, "errors": errors})


# --- run / profile / verify jobs -------------------------------------------------------------------------------
# Payloads name what to execute (a harness) and how; results carry recorded launches, timings and comparisons.
# Worker code (ascend_runner/worker/run_*.py) reads and writes these shapes as plain dicts, since it cannot
# import this module; `*_from` below validate what comes back over the wire.

HARNESS_MODES = ("kernelbench", "script", "entry", "replay")  # replay: verify jobs only
RUN_BACKENDS = ("cuda", "npu", "interpret")


@dataclass
class HarnessSpec:
    """What to execute. `kernelbench`: a module with Model, ModelNew, get_inputs(), get_init_inputs().
    `script`: the file run as __main__ with `argv`. `entry`: `module:function` (or `:function` / `function` in
    the file at `path`), called with no arguments. `replay` (verify only): the file's kernels launched as the
    VerifyRequest's recorded `launches` describe them (worker/replay_verify.py)."""

    mode: str
    path: str  # the file as the user names it: used for imports, line info and messages
    source: str | None = None  # buffer text; when given it is run instead of what is on disk at `path`
    entry: str = ""
    argv: list[str] = field(default_factory=list)

    def validate(self) -> None:
        if not isinstance(self.mode, str) or self.mode not in HARNESS_MODES:
            raise ProtocolError(f"unknown harness mode {self.mode!r}; use one of {', '.join(HARNESS_MODES)}")
        if not isinstance(self.path, str) or not self.path:
            raise ProtocolError("harness needs a path")
        if self.source is not None and not isinstance(self.source, str):
            raise ProtocolError("harness.source must be text")
        if not isinstance(self.entry, str):
            raise ProtocolError("harness.entry must be text")
        if self.mode == "entry" and not self.entry:
            raise ProtocolError("harness mode 'entry' needs entry='module:function'")


@dataclass
class ReplaySpec:
    """Replay one recorded launch alone from the snapshot file a recording run wrote (runner-side path)."""

    snapshot: str
    verify: bool = True  # compare the replayed outputs with the recorded ones


@dataclass
class TimingSpec:
    warmup_ms: float = 25.0
    rep_ms: float = 100.0


@dataclass
class RunRequest:
    harness: HarnessSpec
    record: bool = True  # wrap JITFunction.run and record every launch
    snapshot: bool = False  # save tensors before/after each distinct launch so it can be replayed alone
    artifacts_dir: str = ""  # runner-side folder for snapshots (a temporary one when empty)
    time_launches: bool = True  # replay each distinct launch to time it (meaningless under `interpret`)
    time_reference: bool = True  # kernelbench: also time the reference Model (config_screen needs ModelNew alone)
    max_launches: int = 64  # distinct launches kept; identical ones are folded into `count`
    seed: int = 0
    timing: TimingSpec = field(default_factory=TimingSpec)
    replay: ReplaySpec | None = None
    backend: str | None = None  # filled from the envelope by worker/main.py; run_job reads it from here
    files: dict[str, str] = field(default_factory=dict)  # as in CompileRequest: the user's imported modules
    workdir: str = ""  # as in CompileRequest: set by the runner service
    # kernelbench only: module-global size overrides (a TEST_SHAPES entry) set before get_inputs(), so an
    # interpret profile runs at the task's small test shape instead of its benchmark size
    sizes: dict[str, int] = field(default_factory=dict)

    def validate(self) -> None:
        self.harness.validate()
        check_files(self.files)
        if not isinstance(self.sizes, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in self.sizes.items()
        ):
            raise ProtocolError("sizes must map module globals to integers, e.g. {\"M\": 64}")
        check_numbers(self, "payload")
        check_numbers(self.timing, "timing")
        if self.max_launches < 1:
            raise ProtocolError("max_launches must be at least 1")


@dataclass
class ProfileRequest(RunRequest):
    measure_ceilings: bool = False  # time a device-to-device copy and a bf16 matmul on this device
    ncu: bool = False  # also run Nsight Compute's source view on the slowest launch (when ncu works here)
    ncu_timeout_s: float = 240.0


@dataclass
class VerifyRequest:
    """Candidate vs reference on fresh random inputs. For `kernelbench` the candidate is ModelNew and the
    reference Model; `candidate`/`reference` name other classes in the same module."""

    harness: HarnessSpec
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    candidate: str = "ModelNew"
    reference: str = "Model"
    atol: float | None = None  # override the per-dtype tolerance table
    rtol: float | None = None
    poison: bool = True  # fill fresh torch.empty* allocations with NaN/sentinels while the candidate runs
    time: bool = True
    timing: TimingSpec = field(default_factory=TimingSpec)
    backend: str | None = None  # as in RunRequest
    # Level-5 gate (all optional; see ascend_runner/worker/verify_job.py):
    shapes: list[dict[str, Any]] = field(default_factory=list)  # [{"label", "overrides", "held_out"}]
    baseline_source: str | None = None  # the original file: reference Model/inputs and the timed baseline
    baseline_class: str = "ModelNew"
    reference_source: str | None = None  # the original file when the baseline is an intermediate text
    interleave: dict[str, Any] | None = None  # {"repeats", "overrides", "label"}: baseline vs candidate
    launches: list[dict[str, Any]] = field(default_factory=list)  # replay mode: recorded launches (launch store)
    files: dict[str, str] = field(default_factory=dict)
    workdir: str = ""
    # Trust (worker/verify_isolated.py): an LLM's text runs only confined, unless the user opted in.
    untrusted: bool = False
    allow_unsandboxed: bool = False
    kernels: list[str] = field(default_factory=list)  # Triton kernels the candidate must launch
    budget_s: float | None = None  # the candidate's process is killed after this many seconds
    # Reference outputs an earlier job of this client computed: key -> the secret its result reported. The runner
    # keeps them sealed with it (worker/sealed.py): a job reuses them only with the secret and an intact tag.
    kept_references: dict[str, str] = field(default_factory=dict)

    def validate(self) -> None:
        self.harness.validate()
        if not isinstance(self.kept_references, dict) or len(self.kept_references) > MAX_KEPT_REFERENCES or not all(
            isinstance(k, str) and isinstance(v, str) and _HEX64.fullmatch(k) and _HEX64.fullmatch(v)
            for k, v in self.kept_references.items()
        ):
            raise ProtocolError(f"kept_references must map at most {MAX_KEPT_REFERENCES} sha256 keys to 32-byte hex secrets")
        check_files(self.files)
        check_numbers(self, "payload")
        check_numbers(self.timing, "timing")
        if not isinstance(self.kernels, list) or not all(isinstance(k, str) for k in self.kernels):
            raise ProtocolError("kernels must be a list of kernel names")
        if not isinstance(self.seeds, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in self.seeds
        ):
            raise ProtocolError("seeds must be a list of integers")
        if self.harness.mode not in ("kernelbench", "replay"):
            raise ProtocolError(
                "verify needs a kernelbench harness (Model, ModelNew, get_inputs, ...) or recorded launches to replay"
            )
        if self.harness.mode == "replay":
            if not self.launches or not all(isinstance(x, dict) and x.get("kernel") for x in self.launches):
                raise ProtocolError("a replay verify needs `launches`: recorded launches, each naming its kernel")
            if self.baseline_source is None and self.reference_source is None:
                raise ProtocolError("a replay verify needs the original text (baseline_source)")
        if not self.seeds:
            raise ProtocolError("verify needs at least one seed")
        if not isinstance(self.shapes, list):
            raise ProtocolError("shapes must be a list of {'label', 'overrides'}")
        for shape in self.shapes:
            if not isinstance(shape, dict) or not isinstance(shape.get("overrides", {}), dict):
                raise ProtocolError("each verify shape must be {'label', 'overrides': {GLOBAL: value}}")
        if self.interleave is not None:
            repeats = self.interleave.get("repeats", 5) if isinstance(self.interleave, dict) else None
            if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 2:
                raise ProtocolError("interleave must be {'repeats': an integer >= 2, ...}")
        for name in ("baseline_source", "reference_source"):
            if getattr(self, name, None) is not None and not isinstance(getattr(self, name), str):
                raise ProtocolError(f"{name} must be text")
        for name in ("candidate", "reference", "baseline_class"):
            if not isinstance(getattr(self, name, ""), str):
                raise ProtocolError(f"{name} must be a class name")


@dataclass
class ArgRecord:
    name: str
    kind: str  # "tensor" | "int" | "float" | "bool" | "constexpr" | "none" | "other"
    dtype: str | None = None  # torch dtype without prefix, e.g. "float32"
    shape: list[int] | None = None
    strides: list[int] | None = None  # in elements
    nbytes: int | None = None  # bytes of the viewed elements (numel * itemsize)
    value: Any = None  # scalars and constexprs
    written: bool | None = None  # tensor content changed across the launch (only known with snapshots)
    range: list[Any] | None = None  # tensors: finite [min, max] before the launch (replay draws inputs from it)


@dataclass
class LaunchRecord:
    """One distinct launch (kernel + specialization + grid + argument shapes); `count` identical ones folded."""

    index: int
    kernel: str
    file: str
    line: int  # 1-based line of the `def`
    grid: list[int]
    signature: dict[str, str]  # arg -> "*fp32" | "i32" | "fp32" | "constexpr" ... as the JIT specialized it
    constants: dict[str, Any]
    divisibility: list[str]  # args the JIT marked divisible by 16
    options: dict[str, Any]  # num_warps, num_stages, ...
    args: list[ArgRecord]
    count: int = 1
    uses_dot: bool = False
    # n_regs, n_spills, shared: known for compiled kernels only
    resources: dict[str, Any] = field(default_factory=dict)
    snapshot: str | None = None  # runner-side file usable by ReplaySpec
    specialized_by: str = "mirror"  # "jit-binder": the JIT's own binder; "mirror": recomputed the same way
    time_ms: dict[str, float] | None = None  # {"median", "p20", "p80"} from replay timing
    ttir: str | None = None  # compiled kernels: TTIR without locations (FLOPs, the gate's TF32 evidence)
    dot_ieee_in_source: bool = False  # the kernel's source asks tl.dot for IEEE precision
    module: str | None = None  # the kernel's module as the program imported it (a replay imports it the same way)
    autotune_trials: int = 0  # configs @triton.autotune benchmarked before this launch (the chosen config) ran

    def specialization(self) -> dict[str, Any]:
        """The form analysis/specialize/choose.py consumes (see docs/gpu-results.md, 'Recorded specializations')."""
        return {
            "kernel": self.kernel,
            "signature": dict(self.signature),
            "constants": dict(self.constants),
            "divisibility": list(self.divisibility),
            # as passed at the launch, else as the compiler used them (resources); absent when unknown
            "options": {
                k: v
                for k in ("num_warps", "num_stages")
                if (v := self.options.get(k, self.resources.get(k))) is not None
            },
            "grid": list(self.grid),
        }


@dataclass
class RunResult:
    ok: bool
    backend: str
    # name, sm_count or ai_cores, memory, l2, registers and shared memory per SM
    device: dict[str, Any] = field(default_factory=dict)
    launches: list[LaunchRecord] = field(default_factory=list)
    timings: dict[str, Any] = field(default_factory=dict)  # model_ms / reference_ms / script_s ...
    timing_meaningful: bool = True  # False under `interpret`
    ceilings: dict[str, Any] = field(default_factory=dict)  # measured copy GB/s, matmul TFLOP/s
    ncu: dict[str, Any] = field(default_factory=dict)  # {"kernel", "source_csv", "details", "error"}
    replay: dict[str, Any] = field(default_factory=dict)  # {"passed", "max_abs", ...} for replay runs
    stdout: str = ""  # tail of what the harness printed
    errors: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    elapsed_s: float = 0.0
    device_wait_s: float = 0.0  # waits for another job's hold on a shared device (worker/device_lock.py)

    def specializations(self) -> list[dict[str, Any]]:
        return [launch.specialization() for launch in self.launches]


@dataclass
class SeedCheck:
    seed: int
    passed: bool
    max_abs: float | None = None
    max_rel: float | None = None
    norm_rel: float | None = None  # ||out - ref|| / ||ref||
    reason: str = ""
    shape: str = ""  # the label of the shape checked
    held_out: bool = False  # a shape the search never used
    tolerance: dict[str, Any] = field(default_factory=dict)  # {atol, rtol, basis} or {"outputs": [...]}
    reference: str = ""  # which evaluations of the reference were compared with (float64 and/or as written)
    accumulation: dict[str, Any] = field(default_factory=dict)  # {"k", "op"}: the longest sum the reference makes
    reference_error: float | None = None  # the reference's own distance from its float64 evaluation


@dataclass
class VerifyResult:
    ok: bool  # the job ran (not: the candidate passed)
    passed: bool
    backend: str
    checks: list[SeedCheck] = field(default_factory=list)
    tolerance: dict[str, Any] = field(default_factory=dict)  # {atol, rtol, basis} (worker harness_tolerance)
    candidate_ms: float | None = None
    reference_ms: float | None = None
    speedup: float | None = None
    timing_meaningful: bool = True
    errors: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    timing: dict[str, Any] = field(default_factory=dict)  # interleaved samples (verify_job._interleaved)
    mode: str = "kernelbench"  # or "replay" (worker/replay_verify.py)
    isolated: bool = False  # reference, candidate and comparison in separate processes (worker/verify_isolated.py)
    sandbox: dict[str, Any] = field(default_factory=dict)  # how the candidate's process was confined, or why not
    device: dict[str, Any] = field(default_factory=dict)  # where the verdict was reached (server/provenance)
    # the reference outputs: "computed", or kept from an earlier job (sealed; worker/verify_isolated.py)
    reference_outputs: str = ""
    reference_kept: dict[str, Any] = field(default_factory=dict)  # {"key", "secret"}: send back in kept_references
    seconds: dict[str, float] = field(default_factory=dict)  # where the job's time went (reference, candidate...)
    device_wait_s: float = 0.0  # waits for another job's hold on a shared device (worker/device_lock.py)


def _build(cls: type, raw: Any, what: str) -> Any:
    if not isinstance(raw, dict):
        raise ProtocolError(f"{what} must be a JSON object")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(raw) - names
    if unknown:
        raise ProtocolError(f"{what}: unknown field(s) {sorted(unknown)}")
    try:
        return cls(**raw)
    except TypeError as exc:
        raise ProtocolError(f"bad {what}: {exc}") from None


def _harness_from(raw: Any) -> HarnessSpec:
    spec = _build(HarnessSpec, raw, "harness")
    if not isinstance(spec.argv, list) or not all(isinstance(a, str) for a in spec.argv):
        raise ProtocolError("harness.argv must be a list of strings")
    return spec


def run_request_from(raw: Any, cls: type = RunRequest) -> RunRequest:
    """Validate a run (or, with cls=ProfileRequest, profile) payload."""
    if not isinstance(raw, dict):
        raise ProtocolError("payload must be a JSON object")
    body = dict(raw)
    body["harness"] = _harness_from(body.get("harness"))
    body["timing"] = _build(TimingSpec, body.get("timing", {}), "timing")
    if body.get("replay") is not None:
        body["replay"] = _build(ReplaySpec, body["replay"], "replay")
        if not isinstance(body["replay"].snapshot, str):
            raise ProtocolError("replay.snapshot must be a path")
    if not isinstance(body.get("artifacts_dir", ""), str):
        raise ProtocolError("artifacts_dir must be a path")
    req = _build(cls, body, "payload")
    req.validate()
    return req


def profile_request_from(raw: Any) -> ProfileRequest:
    return run_request_from(raw, ProfileRequest)  # type: ignore[return-value]


def verify_request_from(raw: Any) -> VerifyRequest:
    if not isinstance(raw, dict):
        raise ProtocolError("payload must be a JSON object")
    body = dict(raw)
    body["harness"] = _harness_from(body.get("harness"))
    body["timing"] = _build(TimingSpec, body.get("timing", {}), "timing")
    req = _build(VerifyRequest, body, "payload")
    req.validate()
    return req


def run_result_from(raw: dict[str, Any]) -> RunResult:
    launches = []
    for item in raw.get("launches", []):
        args = [ArgRecord(**a) for a in item.get("args", [])]
        launches.append(LaunchRecord(**{**item, "args": args}))
    return RunResult(**{**raw, "launches": launches})


def verify_result_from(raw: dict[str, Any]) -> VerifyResult:
    return VerifyResult(**{**raw, "checks": [SeedCheck(**c) for c in raw.get("checks", [])]})
