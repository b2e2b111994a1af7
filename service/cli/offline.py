"""Offline subcommands (no server): summary, validate, predict, inspect, convert.

Each takes a model either from a store (`NAME --model-store DIR [--version V]`) or from files
(`--symbol F [--params F] [--config F]`), loads it exactly as the server does (same checks,
same warm-up, progress on stderr), and reports. Inputs for predict/inspect: `.npy` (one
input), `.npz` (keyed by input name), or `.json` — `{"input name": nested list}`, a bare
nested list (one input), or an Open Inference Protocol infer body. Errors are one line on
stderr and exit status 1.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import numpy as np
import orjson

from framework.base import MXNetError

from ..core.dataplane import serving
from ..errors import BadRequest, ServiceError
from ..protocol.codec import parse_request
from ..protocol.datatypes import v2_datatype
from ..protocol.types import InferInput, InferRequest, RequestedOutput
from ..repository import mar
from ..repository.config import parse_config
from ..repository.store import ModelFiles, ModelStore, check_name, find_files
from ..runtime.runner import Runner
from ..runtime.summary import parse_shapes, render_text
from ..settings import Settings
from .progress import Progress

FORMATS = ("2.x", "1.x", "onnx")


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help="model name in the store")
    p.add_argument("--model-store", default="model_store",
                   help="model repository directory (default: model_store)")
    p.add_argument("--version", help="version (default: highest)")
    p.add_argument("--symbol", help="a *-symbol.json file (instead of a store model)")
    p.add_argument("--params", help="the matching .params file")
    p.add_argument("--config", help="a config.json")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def _add_input_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input", metavar="FILE",
                   help=".npy (one input; float64 is cast for a float32 model when exact "
                        "enough), .npz keyed by input name (other keys ignored), or .json "
                        "({name: nested list}, a nested list, or an infer request body)")
    p.add_argument("--image", action="append", metavar="FILE",
                   help="an image (JPEG, PNG, WebP, BMP) for the model's image input, "
                        "preprocessed as its config declares; repeat for a batch")


def _load(args: argparse.Namespace) -> Runner:
    cfg = parse_config(Path(args.config).read_bytes()) if args.config else None
    if args.symbol:
        files = ModelFiles(Path(args.symbol), Path(args.params) if args.params else None)
        name = args.name or Path(args.symbol).name.removesuffix("-symbol.json")
        version = args.version or "1"
    else:
        if not args.name:
            raise BadRequest("give a model name (with --model-store) or --symbol/--params files")
        store = ModelStore(args.model_store, create=False, read_only=True)
        versions = store.versions(args.name)
        if not versions:
            raise BadRequest(f"model {args.name!r} has no versions in {store.root}")
        name, version = args.name, args.version or versions[-1]
        files, cfg = store.files(name, version), cfg or store.read_config(name)
    progress = Progress(f"{name}/{version}", quiet=getattr(args, "quiet", False))
    r = Runner.load(name, version, files, cfg, progress=progress)
    progress.done(f"loaded in {r.load_seconds:.2f}s")
    return r


def _from_json(runner: Runner, raw: bytes) -> list[InferInput]:
    doc = orjson.loads(raw)
    if isinstance(doc, dict) and "inputs" in doc:          # an infer request body
        return parse_request(raw, None, 1 << 31).inputs
    if isinstance(doc, list):
        if len(runner.inputs) != 1:
            raise BadRequest(f"a bare list gives one input; the model takes "
                             f"{[s.name for s in runner.inputs]}")
        doc = {runner.inputs[0].name: doc}
    if not isinstance(doc, dict):
        raise BadRequest("a JSON input is {name: nested list}, a nested list or an infer body")
    out = []
    for s in runner.inputs:
        if s.name not in doc:
            raise BadRequest(f"input file lacks '{s.name}'")
        a = np.asarray(doc[s.name], dtype=s.dtype)
        out.append(InferInput(s.name, s.datatype, a.shape, a))
    return out


def _inputs(runner: Runner, path: str | None, images: list[str] | None = None,
            say=None) -> list[InferInput]:
    """The request's inputs, read from files; the data plane checks them exactly as a server
    request, and images go through the model's declared preprocessing there."""
    say = say or (lambda _m: None)
    if images:
        name = runner.transforms.image_input()
        if name is None:
            raise BadRequest(f"model '{runner.name}' declares no image input (config: an "
                             "input with \"preprocess\": {\"type\": \"image\", ...})")
        blobs = np.empty(len(images), dtype=object)
        blobs[:] = [Path(p).read_bytes() for p in images]
        return [InferInput(name, "BYTES", blobs.shape, blobs)]
    if path is None:
        raise BadRequest("--input FILE is required (.npy for one input, .npz keyed by input "
                         "name, or .json)" + (" or --image FILE" if runner.transforms.images
                                              else ""))
    if path.endswith(".json"):
        return _from_json(runner, Path(path).read_bytes())
    return _from_numpy(runner, np.load(path, allow_pickle=False), say)


def _from_numpy(runner: Runner, z, say) -> list[InferInput]:
    """A .npy (one input) or an .npz whose keys name the inputs (other keys ignored)."""
    names = [s.name for s in runner.inputs]
    if isinstance(z, np.ndarray):
        if len(names) != 1:
            raise BadRequest(f"a .npy file gives one input; the model takes {names}: use .npz")
        z = {names[0]: z}
    else:
        missing = [n for n in names if n not in z.files]
        if missing:
            raise BadRequest(f".npz file lacks {missing} (its keys: {z.files}; the model "
                             f"takes {names})")
        extra = [k for k in z.files if k not in names]
        if extra:
            say(f"ignoring .npz keys {extra}: not inputs of the model ({names})")
    return [_cast_input(s, np.asarray(z[s.name]), say) for s in runner.inputs]


def _cast_input(spec, a: np.ndarray, say) -> InferInput:
    """A float64 array (NumPy's default) for a float32 input is cast when nothing is lost
    beyond float32 rounding (no overflow, no non-zero flushed to zero), and the user is told."""
    if a.dtype == np.float64 and spec.dtype == np.float32:
        with np.errstate(over="ignore", under="ignore"):
            c = a.astype(np.float32)
        lost = (np.isfinite(c) != np.isfinite(a)) | ((c == 0) & (a != 0))
        if lost.any():
            raise BadRequest(f"input '{spec.name}' is float64 and does not fit float32 "
                             f"({int(lost.sum())} values overflow or underflow)")
        say(f"input '{spec.name}': cast float64 → float32 (the model's datatype)")
        a = c
    return InferInput(spec.name, v2_datatype(a.dtype), a.shape, a)


def _dump(doc) -> None:
    print(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY).decode())


def cmd_summary(args: argparse.Namespace) -> int:
    r = _load(args)
    s = r.summary(args.batch_size, parse_shapes(args.shape, [i.name for i in r.inputs], r.name))
    for w in s["warnings"]:
        print(f"hybridserve summary: warning: {w}", file=sys.stderr)
    if args.json:
        _dump(s)
    else:
        sys.stdout.write(render_text(s))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    r = _load(args)
    _dump({"name": r.name, "version": r.version, "valid": True, "warm": r.warm,
           "load_seconds": round(r.load_seconds, 4),
           "config": r.config.model_dump(exclude_none=True)})
    return 0


def _say(args: argparse.Namespace):
    return (lambda _m: None) if args.quiet else (
        lambda m: print(f"hybridserve {args.cmd}: {m}", file=sys.stderr))


def cmd_predict(args: argparse.Namespace) -> int:
    r = _load(args)
    top = 0 if args.output else args.top if args.top is not None else (5 if args.image else 0)
    # the server's classification extension (score:index[:label]) when asked for a top K
    outputs = [RequestedOutput(s.name, classification=top) for s in r.outputs] if top else None
    req = InferRequest(None, _inputs(r, args.input, args.image, _say(args)), outputs)
    with serving(r) as plane:
        resp = asyncio.run(plane.infer(r.name, r.version, req))
    named = {o.name: o.array for o in resp.outputs}
    if args.output:
        np.savez(args.output, **named)
    elif top > 0:
        print(orjson.dumps({n: [[v.decode() for v in row] for row in t.reshape(-1, t.shape[-1])]
                            for n, t in named.items()}, option=orjson.OPT_INDENT_2).decode())
    else:
        print(orjson.dumps(named, option=orjson.OPT_SERIALIZE_NUMPY).decode())
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    r = _load(args)
    params = {"filter": args.filter, "regex": args.regex, "monitor_all": args.monitor_all,
              "include_values": args.max_values > 0, "max_values": args.max_values}
    req = InferRequest(None, _inputs(r, args.input, args.image, _say(args)), None, params)
    # offline, the whole graph may be recorded: limits far above the server's
    limits = Settings().model_copy(update={"inspect_max_records": 100_000,
                                           "inspect_max_values": 1_000_000})
    with serving(r, limits) as plane:
        _dump(asyncio.run(plane.inspect(r.name, r.version, req)))
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    """Re-export a model with the framework: a 1.x export as 2.x (npz params, 2.x JSON), a
    2.x export as 1.x (legacy NDArray-list params, 1.x JSON), or either as one ONNX file
    (`PREFIX.onnx`, batch axis dynamic, checked by onnx.checker). With `--from-mar`: an MMS
    archive into a store (`--to STORE`) as a new model version."""
    if args.from_mar:
        return _convert_mar(args)
    fmt = args.format or args.to or "2.x"
    if fmt not in FORMATS:
        raise BadRequest(f"--format/--to must be one of {list(FORMATS)} (or --to STORE with "
                         f"--from-mar), got {fmt!r}")
    if not args.out:
        raise BadRequest("convert needs --out PREFIX")
    r = _load(args)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    files = r.block.export(args.out, epoch=args.epoch, format=fmt)
    if fmt == "onnx":
        _dump({"format": "onnx", "onnx": files})
    else:
        _dump({"format": fmt, "symbol": files[0], "params": files[1]})
    return 0


def _convert_mar(args: argparse.Namespace) -> int:
    """An MMS `.mar` → `<store>/<name>/<version>/` + config.json, checked by a real load
    before it is moved in (as an upload is); its handler code is never run."""
    target = args.to or args.out
    if not target:
        raise BadRequest("--from-mar needs --to STORE (the model store directory)")
    store, archive = ModelStore(target), Path(args.from_mar)
    staged = store.new_staging()
    try:
        got = mar.unpack(archive, staged, archive.name, mar.MarLimits.of(Settings()))
        name = check_name(args.name or got.name or archive.stem)
        version = args.version or got.version
        for note in got.notes:
            print(f"hybridserve convert: {note}", file=sys.stderr)
        progress = Progress(f"{name}/{version or 'new'}", quiet=args.quiet)
        Runner.load(name, version or "1", find_files(staged), got.config, progress=progress)
        v = store.commit_version(name, staged, version, got.config)
    except BaseException:
        store.discard(staged)
        raise
    _dump({"model": name, "version": v, "store": str(store.root),
           "directory": str(store.version_dir(name, v)), "ignored": got.notes})
    return 0


def run(func, args: argparse.Namespace) -> int:
    """Run a subcommand; model and input problems are one line on stderr, exit status 1."""
    try:
        return func(args)
    except ServiceError as e:
        msg = e.message
    except (MXNetError, OSError, ValueError) as e:
        msg = f"{type(e).__name__}: {e}"
    print(f"hybridserve {args.cmd}: error: {msg}", file=sys.stderr)
    return 1


def add_commands(sub) -> None:
    p = sub.add_parser("summary", help="print a model's layer table")
    _add_model_args(p)
    p.add_argument("--batch-size", type=int, default=1,
                   help="batch size the shapes and FLOPs are computed for (default 1)")
    p.add_argument("--shape", action="append", default=[], metavar="INPUT:D0,D1,...",
                   help="an input's shape (e.g. data:1,3,224,224; repeatable); without it, "
                        "an input with free dims beyond the batch stays unknown (a warning)")
    p.add_argument("--json", action="store_true", help="the table as JSON instead of text")
    p.set_defaults(func=cmd_summary)
    p = sub.add_parser("validate", help="load and warm a model as the server would (exit 1 "
                                        "if it would be refused)")
    _add_model_args(p)
    p.set_defaults(func=cmd_validate)
    p = sub.add_parser("predict", help="run a model on .npy/.npz/.json input or on images")
    _add_model_args(p)
    _add_input_args(p)
    p.add_argument("--top", type=int, metavar="K",
                   help="print each output as its top K classes, score:index[:label] "
                        "(default with --image: 5)")
    p.add_argument("--output", help="write outputs to this .npz instead of printing JSON")
    p.set_defaults(func=cmd_predict)
    p = sub.add_parser("inspect", help="per-op tensor statistics for one input")
    _add_model_args(p)
    _add_input_args(p)
    p.add_argument("--filter", help="substring of node name or op (case-insensitive)")
    p.add_argument("--regex", action="store_true",
                   help="--filter is a regular expression (case-insensitive)")
    p.add_argument("--monitor-all", action="store_true", help="op inputs too")
    p.add_argument("--max-values", type=int, default=0, help="include up to N values")
    p.set_defaults(func=cmd_inspect)
    p = sub.add_parser("convert", help="re-export a model in MXNet 2.x or 1.x format, or as ONNX")
    _add_model_args(p)
    p.add_argument("--out", help="output prefix (writes PREFIX-symbol.json and "
                                 "PREFIX-NNNN.params, or PREFIX.onnx)")
    p.add_argument("--format", choices=FORMATS,
                   help="2.x: npz params + 2.x JSON; 1.x: legacy NDArray-list params + 1.x JSON; "
                        "onnx: one standard ONNX file (default 2.x)")
    p.add_argument("--to", help="the same as --format; with --from-mar: the model store")
    p.add_argument("--from-mar", metavar="MODEL.mar",
                   help="unpack an MXNet Model Server archive into the store --to as a new "
                        "version of the model NAME (default: the archive's manifest name)")
    p.add_argument("--epoch", type=int, default=0,
                   help="epoch number in the params file name (default 0)")
    p.set_defaults(func=cmd_convert)
