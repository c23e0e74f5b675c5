"""`tritonlens-runner serve`: expose this host's runner environments over HTTP to editors elsewhere."""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import stat
import sys
from pathlib import Path

LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_token(path: str) -> str:
    try:
        mode = os.stat(path).st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            print(
                f"tritonlens-runner: warning: token file {path} is readable by other users "
                f"(mode {stat.filemode(mode)}): chmod 600 {path}",
                file=sys.stderr,
            )
        token = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SystemExit(f"tritonlens-runner: cannot read token file {path}: {exc.strerror}") from None
    if len(token) < 16:
        raise SystemExit(f"tritonlens-runner: the token in {path} is shorter than 16 characters")
    return token


def read_mode(path: str) -> int:
    try:
        return os.stat(path).st_mode
    except OSError as exc:
        raise SystemExit(f"tritonlens-runner: cannot read token file {path}: {exc.strerror}") from None


def read_tokens(path: str) -> dict[str, str]:
    """Client name -> token from a token file (one bare token, or `NAME TOKEN` lines: see remote_tokens)."""
    from .remote_tokens import TokenFileError, parse_tokens

    mode = read_mode(path)
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        # The service refuses what read_token only warns about: other users (and their jobs) could read it.
        raise SystemExit(
            f"tritonlens-runner: token file {path} is readable by other users "
            f"(mode {stat.filemode(mode)}): chmod 600 {path}"
        )
    read_token(path)  # the same length check as a single-token file
    try:
        return parse_tokens(Path(path).read_text(encoding="utf-8"))
    except TokenFileError as exc:
        raise SystemExit(f"tritonlens-runner: token file {path}: {exc}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tritonlens-runner", description="tritonlens runner service")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve jobs over HTTP (bearer token required)")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    serve.add_argument("--port", type=int, default=8642)
    serve.add_argument(
        "--token-file", help="file holding the bearer token (>= 16 characters), or one `NAME TOKEN` line per client "
        "(each client sees only its own jobs); required unless --openapi"
    )
    serve.add_argument(
        "--allow-non-loopback", action="store_true", help="permit binding a non-loopback address"
    )
    serve.add_argument("--max-concurrency", type=int, default=2)
    serve.add_argument("--max-queue", type=int, default=16)
    serve.add_argument("--max-body-mb", type=float, default=8.0)
    serve.add_argument(
        "--sandbox-root",
        help="folder (yours, not writable by others) for the jobs' private folders (default: a fresh one)",
    )
    serve.add_argument(
        "--allow-path",
        action="append",
        default=[],
        metavar="FOLDER",
        help="a folder payload paths (artifacts_dir, replay.snapshot, harness.path) may name besides the "
        "job's own folder; repeat for more",
    )
    serve.add_argument("--tls-cert", "--ssl-certfile", dest="ssl_certfile",
                       help="serve HTTPS with this certificate (PEM)")
    serve.add_argument("--tls-key", "--ssl-keyfile", dest="ssl_keyfile", help="the certificate's private key (PEM)")
    serve.add_argument(
        "--insecure", action="store_true",
        help="with --allow-non-loopback: serve plain HTTP beyond loopback (only behind a TLS proxy)",
    )
    serve.add_argument("--config", help='JSON file: runner environments, e.g. {"cuda": {"python": PATH}}')
    serve.add_argument(
        "--openapi", action="store_true", help="print the OpenAPI spec and exit (no token file needed)"
    )
    ray_local = sub.add_parser(
        "ray-local",
        help="run a command against a private local Ray cluster (own network and PID namespace, token auth)",
    )
    from .ray_cluster import add_arguments

    add_arguments(ray_local)
    return parser


def _ray_local(args: argparse.Namespace) -> int:
    from .ray_cluster import run_local_cluster, spec_from

    command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    try:
        return run_local_cluster(spec_from(args), command, isolated=not args.no_isolation)
    except (ValueError, RuntimeError) as exc:
        print(f"tritonlens-runner ray-local: {exc}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "ray-local":
        return _ray_local(args)
    try:
        from .local_runner import LocalRunner
        from .remote_gate import uvicorn_server
        from .remote_sandbox import SandboxError
        from .remote_server import ServerConfig, create_app
        from .remote_tokens import scrub_environment
    except ImportError as exc:
        print(
            f"tritonlens-runner: {exc}; install the service with `pip install 'tritonlens[remote]'`",
            file=sys.stderr,
        )
        return 2
    if args.openapi:  # the spec holds no secret: no token, no runner environments needed
        app = create_app(ServerConfig(token="spec-only-" + "x" * 16), _NoRunner())
        print(json.dumps(app.openapi(), indent=2))
        return 0
    if not args.token_file:
        print("tritonlens-runner: serve needs --token-file FILE (a token of >= 16 characters)", file=sys.stderr)
        return 2
    tls = bool(args.ssl_certfile and args.ssl_keyfile)
    if bool(args.ssl_certfile) != bool(args.ssl_keyfile):
        print("tritonlens-runner: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    if not is_loopback(args.host):
        if not args.allow_non_loopback:
            print(
                f"tritonlens-runner: refusing to bind {args.host}: pass --allow-non-loopback "
                "(with --tls-cert/--tls-key, or --insecure behind a TLS proxy)",
                file=sys.stderr,
            )
            return 2
        if not tls and not args.insecure:
            print(
                f"tritonlens-runner: refusing to serve {args.host} without TLS: the bearer token and your "
                "kernels would cross the network in clear text; pass --tls-cert/--tls-key, or --insecure "
                "when a TLS proxy is in front",
                file=sys.stderr,
            )
            return 2
        if not tls:
            print(
                f"tritonlens-runner: warning: serving {args.host} without TLS (--insecure): the bearer token "
                "and your kernels cross the network in clear text unless a TLS proxy is in front",
                file=sys.stderr,
            )
    tokens = read_tokens(args.token_file)
    # Workers inherit this process's environment: a token kept in a variable would be readable by every job.
    scrubbed = scrub_environment(os.environ, list(tokens.values()))
    if scrubbed:
        print(f"tritonlens-runner: removed {', '.join(scrubbed)} from the jobs' environment (it holds a token)",
              file=sys.stderr)
    config = ServerConfig(
        token="",
        tokens=tokens,
        max_concurrency=max(1, args.max_concurrency),
        max_queue=max(0, args.max_queue),
        max_body_bytes=int(args.max_body_mb * 1024 * 1024),
        sandbox_root=Path(args.sandbox_root) if args.sandbox_root else None,
        allowed_paths=[Path(p).resolve() for p in args.allow_path],
    )
    try:
        runner_config = json.loads(Path(args.config).read_text()) if args.config else None
    except (OSError, ValueError) as exc:
        print(f"tritonlens-runner: cannot read --config {args.config}: {exc}", file=sys.stderr)
        return 2
    # One worker per job the service runs at once: a job never waits for a worker while shown as running.
    runner_config = {"workers": config.max_concurrency, **(runner_config or {})}
    try:
        app = create_app(config, LocalRunner(runner_config))
    except SandboxError as exc:
        print(f"tritonlens-runner: {exc}", file=sys.stderr)
        return 2
    ssl = {"ssl_certfile": args.ssl_certfile, "ssl_keyfile": args.ssl_keyfile} if tls else {}
    uvicorn_server(app, token=list(tokens.values()), host=args.host, port=args.port, **ssl).run()
    return 0


class _NoRunner:
    """Stands in for a runner where only the app's routes are needed (printing the spec)."""

    def submit(self, job: dict, **_kw: object) -> dict:
        raise RuntimeError("no runner")

    def health(self) -> dict:
        return {}

    def close(self) -> None:
        pass


if __name__ == "__main__":
    sys.exit(main())
