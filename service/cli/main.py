"""`hybridserve` command line: `serve` (the server) and the offline `summary`, `validate`,
`predict`, `inspect` and `convert` (see offline.py)."""
from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from typing import Sequence

import uvicorn

from ..api.app import create_app
from ..logs import uvicorn_log_config
from ..settings import Settings
from . import offline

_SERVE_FLAGS = ("model_store", "host", "port", "workers", "log_level", "engine")


def add_serve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model-store", help="model repository directory (default: model_store)")
    p.add_argument("--host", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 8000)")
    p.add_argument("--workers", type=int, help="worker processes (default 1)")
    p.add_argument("--log-level", choices=["critical", "error", "warning", "info", "debug"])
    p.add_argument("--engine", choices=["onnxruntime", "numpy"],
                   help="what runs requests (default onnxruntime, NumPy where it cannot)")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(args: argparse.Namespace) -> int:

    overrides = {k: getattr(args, k) for k in _SERVE_FLAGS if getattr(args, k, None) is not None}
    settings = Settings(**overrides)
    try:
        settings.check()
    except ValueError as e:
        print(f"hybridserve: {e}", file=sys.stderr)
        return 2
    if not _loopback(settings.host) and settings.auth_token is None:
        print(f"hybridserve: warning: listening on {settings.host} without HYBRIDSERVE_AUTH_TOKEN:"
              " anyone who can reach this port can upload, delete and inspect models",
              file=sys.stderr)
    common = dict(host=settings.host, port=settings.port, log_level=settings.log_level,
                  access_log=settings.access_log,
                  log_config=uvicorn_log_config(settings.log_level, settings.log_json),
                  timeout_graceful_shutdown=int(settings.graceful_timeout_s))
    if settings.workers > 1:
        # workers are separate processes: hand them the settings through the environment
        # (each worker polls the store manifest, HYBRIDSERVE_STORE_POLL_S, to stay in step)
        for k, v in overrides.items():
            os.environ[f"HYBRIDSERVE_{k.upper()}"] = str(v)
        uvicorn.run("service.api.app:create_app_from_env", factory=True, workers=settings.workers,
                    **common)
    else:
        uvicorn.run(create_app(settings), **common)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hybridserve", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("serve", help="run the inference server")
    add_serve_args(p)
    p.set_defaults(func=serve)
    offline.add_commands(sub)
    args = parser.parse_args(argv)
    if args.cmd == "serve":
        return args.func(args)
    return offline.run(args.func, args)


if __name__ == "__main__":
    sys.exit(main())
