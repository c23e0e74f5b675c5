"""`tritonlens-runner serve`: expose this host's runner environments over HTTP to editors elsewhere."""

from __future__ import annotations

import argparse
import ipaddress
import json
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
        token = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SystemExit(f"tritonlens-runner: cannot read token file {path}: {exc.strerror}") from None
    if len(token) < 16:
        raise SystemExit(f"tritonlens-runner: the token in {path} is shorter than 16 characters")
    return token


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tritonlens-runner", description="tritonlens runner service")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve jobs over HTTP (bearer token required)")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    serve.add_argument("--port", type=int, default=8642)
    serve.add_argument("--token-file", required=True, help="file holding the bearer token (>= 16 characters)")
    serve.add_argument(
        "--allow-non-loopback", action="store_true", help="permit binding a non-loopback address"
    )
    serve.add_argument("--max-concurrency", type=int, default=2)
    serve.add_argument("--max-queue", type=int, default=16)
    serve.add_argument("--max-body-mb", type=float, default=8.0)
    serve.add_argument("--sandbox-root", help="where each job's sandbox directory is made")
    serve.add_argument("--config", help='JSON file: runner environments, e.g. {"cuda": {"python": PATH}}')
    serve.add_argument("--openapi", action="store_true", help="print the OpenAPI spec and exit")
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
    if not is_loopback(args.host) and not args.allow_non_loopback:
        print(
            f"tritonlens-runner: refusing to bind {args.host}: pass --allow-non-loopback (and put TLS in front)",
            file=sys.stderr,
        )
        return 2
    try:
        import uvicorn

        from .client import LocalRunner
        from .remote_server import ServerConfig, create_app
    except ImportError as exc:
        print(
            f"tritonlens-runner: {exc}; install the service with `pip install 'tritonlens[remote]'`",
            file=sys.stderr,
        )
        return 2
    config = ServerConfig(
        token=read_token(args.token_file),
        max_concurrency=max(1, args.max_concurrency),
        max_queue=max(0, args.max_queue),
        max_body_bytes=int(args.max_body_mb * 1024 * 1024),
    )
    if args.sandbox_root:
        config.sandbox_root = Path(args.sandbox_root)
    runner_config = json.loads(Path(args.config).read_text()) if args.config else None
    app = create_app(config, LocalRunner(runner_config))
    if args.openapi:
        print(json.dumps(app.openapi(), indent=2))
        return 0
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0


if __name__ == "__main__":
    sys.exit(main())
