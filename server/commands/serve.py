"""`tritonlens serve`: the language server over stdio (default) or TCP."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("serve", help="run the language server (stdio by default)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    p.add_argument("--log-file", metavar="PATH", help="also write the server's log to this file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here so `tritonlens check` never pays for pygls start-up.
    from ..lsp.server import serve

    host = port = None
    if args.tcp:
        host, sep, port_text = args.tcp.rpartition(":")
        if not sep or not port_text.isdigit():
            raise SystemExit(f"tritonlens serve: --tcp wants HOST:PORT, got {args.tcp!r}")
        port = int(port_text)
    serve(tcp_host=host or None, tcp_port=port, log_file=args.log_file)
    return 0
