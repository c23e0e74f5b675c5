"""A private local Ray cluster: a head and N worker nodes on this machine, a command run inside, all torn down.

`tritonlens-runner ray-local [--nodes N ...] -- COMMAND...` (and the tests) use it. Ray binds its servers to
every interface of the node and turns `localhost` into the machine's address, so flags alone cannot keep a
cluster on loopback. Isolation instead: the cluster and the command run in a network namespace of their own
(only a loopback interface: nothing listens beyond this machine, no traffic leaves it) and a PID namespace of
their own (every Ray process dies with the command, even on SIGKILL). Always with Ray's token authentication
(a fresh random token per cluster) and usage stats off. `--no-isolation` runs without the namespaces (for a
machine where they are not permitted) and says that Ray then listens on all interfaces.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

UNSHARE = ("unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc")
HEAD_PORT = 6390
OBJECT_STORE_BYTES = 200 * 1024 * 1024  # small: several nodes share one machine's memory in tests


@dataclass(frozen=True)
class NodeSpec:
    cpus: int = 1
    gpus: int = 0  # declared GPUs (fake ones on a machine without: placement is still exercised)
    npus: int = 0  # units of the custom NPU resource

    @classmethod
    def parse(cls, text: str) -> NodeSpec:
        """`cpus=2,gpus=1,npus=0` (any subset)."""
        values: dict[str, int] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, _, value = part.partition("=")
            if key not in ("cpus", "gpus", "npus") or not value.isdigit():
                raise ValueError(f"--node takes cpus=N,gpus=N,npus=N, not {text!r}")
            values[key] = int(value)
        return cls(**values)


@dataclass(frozen=True)
class ClusterSpec:
    nodes: tuple[NodeSpec, ...] = (NodeSpec(),)  # worker nodes; the head holds no CPUs, so work lands on them


def ray_env(token: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token, "RAY_USAGE_STATS_ENABLED": "0"})
    return env


def _ray_cli() -> str:
    found = Path(sys.executable).with_name("ray")
    return str(found) if found.exists() else (shutil.which("ray") or "ray")


def _start(args: list[str], env: dict[str, str]) -> None:
    out = subprocess.run([_ray_cli(), "start", *args], env=env, capture_output=True, text=True, timeout=180)
    if out.returncode != 0:
        raise RuntimeError(f"`ray start {' '.join(args)}` failed:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")


def start_cluster(spec: ClusterSpec, token: str, temp_dir: str) -> str:
    """Start head + worker nodes on 127.0.0.1; returns the GCS address once every node has joined."""
    env = ray_env(token)
    common = ["--disable-usage-stats", f"--object-store-memory={OBJECT_STORE_BYTES}", "--node-ip-address=127.0.0.1"]
    _start(
        ["--head", f"--port={HEAD_PORT}", "--num-cpus=0", "--num-gpus=0", "--include-dashboard=false",
         f"--temp-dir={temp_dir}", *common],
        env,
    )
    address = f"127.0.0.1:{HEAD_PORT}"
    for node in spec.nodes:
        resources = json.dumps({"NPU": node.npus}) if node.npus else "{}"
        _start(
            [f"--address={address}", f"--num-cpus={node.cpus}", f"--num-gpus={node.gpus}",
             f"--resources={resources}", *common],
            env,
        )
    _wait_for_nodes(address, len(spec.nodes) + 1, env)
    return address


def _wait_for_nodes(address: str, count: int, env: dict[str, str], timeout_s: float = 120.0) -> None:
    probe = (
        "import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR', log_to_driver=False); "
        "print(sum(1 for n in ray.nodes() if n['Alive']))"
    )
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        out = subprocess.run([sys.executable, "-c", probe, address], env=env, capture_output=True, text=True)
        last = out.stdout.strip() or out.stderr[-500:]
        if out.returncode == 0 and last.isdigit() and int(last) >= count:
            return
        time.sleep(1.0)
    raise RuntimeError(f"the local Ray cluster did not reach {count} nodes in {timeout_s:.0f} s: {last}")


def stop_cluster(token: str) -> None:
    subprocess.run([_ray_cli(), "stop", "--force"], env=ray_env(token), capture_output=True, timeout=120)


def _loopback_up() -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True, capture_output=True)


def run_inside(spec: ClusterSpec, command: list[str], isolated: bool) -> int:
    """Start the cluster, run `command` against it (RAY_ADDRESS and the token in its environment), stop it."""
    if isolated:
        _loopback_up()
    token = secrets.token_hex(32)
    temp_dir = tempfile.mkdtemp(prefix="tl-ray-")  # short: Ray's socket paths must fit in 107 bytes
    try:
        address = start_cluster(spec, token, temp_dir)
        env = ray_env(token)
        env["RAY_ADDRESS"] = address
        print(f"[ray-local] {len(spec.nodes)} worker node(s) up at {address} (token auth on)", file=sys.stderr)
        return subprocess.run(command, env=env).returncode
    finally:
        stop_cluster(token)
        shutil.rmtree(temp_dir, ignore_errors=True)


def isolation_prefix() -> list[str] | None:
    """The unshare command line that works here (as root, or through a user namespace), or None."""
    for prefix in (list(UNSHARE), [UNSHARE[0], "--map-root-user", *UNSHARE[1:]]):
        try:
            ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=20).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            return prefix
    return None


def run_local_cluster(spec: ClusterSpec, command: list[str], isolated: bool = True) -> int:
    if not command:
        raise ValueError("give the command to run inside the cluster after `--`")
    if not isolated:
        print(
            "[ray-local] warning: without isolation Ray's servers listen on every interface of this machine "
            "(token authentication is on)",
            file=sys.stderr,
        )
        return run_inside(spec, command, isolated=False)
    prefix = isolation_prefix()
    if prefix is None:
        raise RuntimeError(
            "cannot make a private network namespace here (needs root or unprivileged user namespaces); "
            "rerun with --no-isolation to accept a cluster that listens on every interface"
        )
    inner = [sys.executable, "-m", __name__, "--inner", json.dumps([asdict(n) for n in spec.nodes]), "--", *command]
    return subprocess.run([*prefix, *inner]).returncode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nodes", type=int, default=1, help="worker nodes alike (default 1)")
    parser.add_argument("--cpus-per-node", type=int, default=1)
    parser.add_argument("--gpus-per-node", type=int, default=0, help="GPUs each node declares")
    parser.add_argument("--npus-per-node", type=int, default=0, help="units of the NPU resource each node declares")
    parser.add_argument(
        "--node", action="append", default=[], metavar="cpus=N,gpus=N,npus=N",
        help="one worker node of its own shape (repeatable; replaces --nodes)",
    )
    parser.add_argument("--no-isolation", action="store_true", help="no private network/PID namespace")
    parser.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="run inside the cluster")


def spec_from(args: argparse.Namespace) -> ClusterSpec:
    if args.node:
        return ClusterSpec(tuple(NodeSpec.parse(n) for n in args.node))
    if args.nodes < 1:
        raise ValueError("--nodes must be at least 1")
    node = NodeSpec(args.cpus_per_node, args.gpus_per_node, args.npus_per_node)
    return ClusterSpec((node,) * args.nodes)


def _inner_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ray_cluster --inner")
    parser.add_argument("--inner", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    nodes = tuple(NodeSpec(**n) for n in json.loads(args.inner))
    return run_inside(ClusterSpec(nodes), command, isolated=True)


if __name__ == "__main__":
    sys.exit(_inner_main(sys.argv[1:]))
