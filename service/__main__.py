"""`python -m service [--model-store PATH] [--port N] ...`: `hybridserve serve`, every setting a
flag (`--help` lists them)."""
from __future__ import annotations

import argparse
import sys

from .cli import add_serve_args, serve


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m service",
                                     description="hybridserve model server (Open Inference "
                                                 "Protocol v2); env vars: HYBRIDSERVE_*")
    add_serve_args(parser)
    return serve(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
