"""hybridserve: serve MXNet exports over the Open Inference Protocol v2 (`serve`), or work on a
model without a server: `summary`, `validate`, `predict` (arrays or images), `inspect`,
`convert`. `hybridserve COMMAND --help` lists each command's options."""
from __future__ import annotations

import argparse
import errno
import ipaddress
import os
import socket
import sys
from typing import Sequence

import uvicorn

from ..api.app import create_app
from ..api.connguard import uvicorn_options
from ..logs import uvicorn_log_config
from ..repository.url import check_store_url
from ..settings import Settings
from . import offline
from . import draining
from .flags import add_settings_flags, overrides as flag_overrides

add_serve_args = add_settings_flags


def port_problem(host: str, port: int, flag: str = "--port") -> str | None:
    """Why `host:port` cannot be bound now (None: it can) — checked before any model loads."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        return f"cannot resolve host {host!r}: {e.strerror}"
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)    # as uvicorn binds
        try:
            s.bind(addr)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return (f"port {port} on {host} is already in use (another hybridserve?): "
                        f"stop it or choose another {flag}")
            return f"cannot listen on {host}:{port}: {e.strerror}"
    return None


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(args: argparse.Namespace) -> int:
    overrides = flag_overrides(args)
    try:
        settings = Settings(**overrides)
        settings.check()
        check_store_url(settings.model_store)       # s3:/x is never taken as a directory
    except ValueError as e:
        print(f"hybridserve: {e}", file=sys.stderr)
        return 2
    problem = port_problem(settings.host, settings.port)
    if problem is None and settings.grpc_port:
        problem = port_problem(settings.host, settings.grpc_port, "--grpc-port (0: no gRPC)")
    if problem:
        print(f"hybridserve: error: {problem}", file=sys.stderr)
        return 1
    if not _loopback(settings.host) and settings.auth_token is None:
        print(f"hybridserve: warning: listening on {settings.host} without HYBRIDSERVE_AUTH_TOKEN:"
              " anyone who can reach this port can upload, delete and inspect models",
              file=sys.stderr)
    common = dict(host=settings.host, port=settings.port, log_level=settings.log_level,
                  access_log=settings.access_log,
                  log_config=uvicorn_log_config(settings.log_level, settings.log_json),
                  timeout_graceful_shutdown=int(settings.graceful_timeout_s),
                  **uvicorn_options(settings))      # header/body timeouts, connection cap
    if settings.workers > 1:
        # workers are separate processes: hand them the settings through the environment
        # (each worker polls the store manifest, HYBRIDSERVE_STORE_POLL_S, to stay in step)
        for k, v in overrides.items():
            os.environ[f"HYBRIDSERVE_{k.upper()}"] = (str(v).lower() if isinstance(v, bool)
                                                      else str(v))
        uvicorn.run("service.api.app:create_app_from_env", factory=True, workers=settings.workers,
                    **common)
    else:
        draining.run(create_app(settings), settings.drain_s, **common)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hybridserve", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("serve", help="run the inference server (every setting is a flag)",
                       description="Run the inference server. Every flag is also an "
                                   "environment variable HYBRIDSERVE_<NAME>; flags win.")
    add_serve_args(p)
    p.set_defaults(func=serve)
    offline.add_commands(sub)
    args = parser.parse_args(argv)
    if args.cmd == "serve":
        return args.func(args)
    return offline.run(args.func, args)


if __name__ == "__main__":
    sys.exit(main())
