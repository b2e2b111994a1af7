"""Offline subcommands (no server): summary, validate, predict, inspect, convert.

Each takes a model either from a store (`--model-store DIR NAME [--version V]`) or from files
(`--symbol F [--params F] [--config F]`), loads it exactly as the server does, and reports.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import orjson

from .config import parse_config
from .errors import ServiceError
from .runner import Runner
from .store import ModelFiles, ModelStore


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help="model name in the store")
    p.add_argument("--model-store", default="model_store")
    p.add_argument("--version", help="version (default: highest)")
    p.add_argument("--symbol", help="a *-symbol.json file (instead of a store model)")
    p.add_argument("--params", help="the matching .params file")
    p.add_argument("--config", help="a config.json")


def _load(args: argparse.Namespace) -> Runner:
    cfg = parse_config(Path(args.config).read_bytes()) if args.config else None
    if args.symbol:
        files = ModelFiles(Path(args.symbol), Path(args.params) if args.params else None)
        name = args.name or Path(args.symbol).name[: -len("-symbol.json")]
        return Runner.load(name, args.version or "1", files, cfg)
    if not args.name:
        raise SystemExit("give a model name (with --model-store) or --symbol/--params files")
    store = ModelStore(args.model_store, create=False)
    versions = store.versions(args.name)
    if not versions:
        raise SystemExit(f"model {args.name!r} has no versions in {store.root}")
    v = args.version or versions[-1]
    return Runner.load(args.name, v, store.files(args.name, v), cfg or store.read_config(args.name))


def _inputs(runner: Runner, path: str | None) -> list[np.ndarray]:
    if path is None:
        raise SystemExit("--input FILE (.npy for one input, .npz keyed by input name) is required")
    if path.endswith(".npz"):
        z = np.load(path, allow_pickle=False)
        return [z[s.name] for s in runner.inputs]
    return [np.load(path, allow_pickle=False)]


def cmd_summary(args: argparse.Namespace) -> int:
    from .summary import render_text
    s = _load(args).summary(args.batch_size)
    sys.stdout.write(orjson.dumps(s, option=orjson.OPT_INDENT_2).decode() + "\n" if args.json
                     else render_text(s))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        r = _load(args)
    except ServiceError as e:
        print(f"INVALID: {e.message}", file=sys.stderr)
        return 1
    print(orjson.dumps({"name": r.name, "version": r.version, "warm": r.warm,
                        "load_seconds": round(r.load_seconds, 4),
                        "config": r.config.model_dump(exclude_none=True)},
                       option=orjson.OPT_INDENT_2).decode())
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    r = _load(args)
    outs = r.run(_inputs(r, args.input))
    if args.output:
        np.savez(args.output, **{s.name: o for s, o in zip(r.outputs, outs)})
    else:
        print(orjson.dumps({s.name: np.asarray(o) for s, o in zip(r.outputs, outs)},
                           option=orjson.OPT_SERIALIZE_NUMPY).decode())
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from .inspection import inspect_model
    r = _load(args)
    params = {"filter": args.filter, "monitor_all": args.monitor_all,
              "include_values": args.max_values > 0, "max_values": args.max_values}
    doc = inspect_model(r, _inputs(r, args.input), params, 100_000, 1_000_000)
    print(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    """Re-export a model (e.g. a 1.x export as 2.x: npz params, 2.x JSON) with the framework."""
    r = _load(args)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    files = r.block.export(args.out, epoch=args.epoch, format=args.format)
    print(orjson.dumps({"symbol": files[0], "params": files[1]}).decode())
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("summary", help="print a model's layer table")
    _add_model_args(p)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_summary)
    p = sub.add_parser("validate", help="load and warm a model as the server would")
    _add_model_args(p)
    p.set_defaults(func=cmd_validate)
    p = sub.add_parser("predict", help="run a model on .npy/.npz input")
    _add_model_args(p)
    p.add_argument("--input")
    p.add_argument("--output", help="write outputs to this .npz instead of printing JSON")
    p.set_defaults(func=cmd_predict)
    p = sub.add_parser("inspect", help="per-op tensor statistics for one input")
    _add_model_args(p)
    p.add_argument("--input")
    p.add_argument("--filter")
    p.add_argument("--monitor-all", action="store_true")
    p.add_argument("--max-values", type=int, default=0)
    p.set_defaults(func=cmd_inspect)
    p = sub.add_parser("convert", help="re-export a model in MXNet 2.x or 1.x format")
    _add_model_args(p)
    p.add_argument("--out", required=True, help="output prefix (writes PREFIX-symbol.json, "
                                                "PREFIX-NNNN.params)")
    p.add_argument("--format", choices=["2.x", "1.x"], default="2.x")
    p.add_argument("--epoch", type=int, default=0)
    p.set_defaults(func=cmd_convert)
