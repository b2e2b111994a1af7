"""`serve` flags generated from the settings model: every `Settings` field is a `--kebab-name`
flag (and stays the `HYBRIDSERVE_<NAME>` variable), typed from its annotation, with the help
text below. A setting added without a help text here fails tests/service/cli (no silent flag).
"""
from __future__ import annotations

import argparse
import typing
from pathlib import Path

from pydantic import ByteSize, SecretStr

from ..settings import Settings

HELP: dict[str, str] = {
    "model_store": "model repository directory",
    "host": "bind address (loopback unless told otherwise)",
    "port": "TCP port",
    "workers": "worker processes (each polls the store like a replica)",
    "log_level": "log level",
    "log_json": "log one JSON object per line (--no-log-json: plain text)",
    "access_log": "log every request (costs throughput)",
    "server_name": "name reported by GET /v2",
    "graceful_timeout_s": "seconds in-flight requests get to finish at shutdown",
    "grpc_port": "TCP port of the gRPC API (Open Inference Protocol + Triton extensions; 0: off)",
    "grpc_tls_cert": "PEM certificate chain for gRPC over TLS (with --grpc-tls-key)",
    "grpc_tls_key": "PEM private key for gRPC over TLS (with --grpc-tls-cert)",
    "grpc_reflection": "serve gRPC server reflection (for grpcurl and the like)",
    "load_on_startup": "load every model of the store at startup",
    "store_poll_s": "seconds between polls of the store manifest (0: never)",
    "poll_interval_s": "older name of --store-poll-s (wins when set)",
    "store_read_only": "serve the store read-only (default: detected)",
    "staging_stale_s": "age after which another process's staging debris is removed",
    "load_threads": "models loaded at once",
    "inference_threads": "forwards that may run at once per worker (default: cores)",
    "inline_max_flops": "requests estimated below this many FLOPs run on the event loop (0: never)",
    "blas_threads": "threads per BLAS call (default: cores / concurrent forwards; 0: the "
                    "library's own)",
    "intra_op_threads": "threads one forward's heavy ops may split over (1: off)",
    "engine": "what runs requests: onnxruntime (NumPy where a region cannot lower or the "
              "load-time check fails) or numpy",
    "ort_providers": "ONNX Runtime execution providers, comma-separated (default: CUDA when "
                     "onnxruntime reports it, then CPU)",
    "ort_intra_op_threads": "threads per ONNX Runtime session, shared by the inference threads "
                            "(default: cores / workers, or the intra-op threads when larger)",
    "ort_spinning": "let ONNX Runtime's intra-op threads spin between tasks",
    "optimize_graphs": "serve the optimize_for twin of each graph when it matches the traced one",
    "gil_switch_interval_s": "CPython GIL switch interval while serving",
    "memory_budget": "memory the loaded model versions may hold together, e.g. 4GiB; a load "
                     "beyond it is refused with 507 (0: no budget; default: "
                     "--memory-budget-fraction of the memory available at startup)",
    "memory_budget_fraction": "share of the memory available at startup used as the budget "
                              "when --memory-budget is not given",
    "default_max_batch_size": "max_batch_size of a model without config (0: no batching)",
    "default_batch_delay_us": "queue delay of a batched model without one declared",
    "default_max_queue_size": "waiting requests per model before 503",
    "max_body_bytes": "largest request body (413 beyond)",
    "max_upload_bytes": "largest upload or load-with-files body (413 beyond)",
    "max_tensor_elements": "largest input tensor, in elements (400 beyond)",
    "max_graph_nodes": "largest graph accepted, in nodes",
    "max_symbol_bytes": "largest *-symbol.json file",
    "max_config_bytes": "largest config.json",
    "max_image_pixels": "largest encoded image accepted, in pixels (checked before decoding)",
    "max_params_bytes": "largest .params file",
    "max_json_depth": "deepest JSON document accepted",
    "max_activation_bytes": "refuse a model whose activations at its largest warm-up batch "
                            "exceed this",
    "inference_timeout_s": "seconds before a request is answered 504",
    "inspect_max_records": "most records one inspection returns",
    "inspect_max_values": "most values per tensor an inspection returns",
    "auth_token": "bearer token for management (prefer HYBRIDSERVE_AUTH_TOKEN: flags show "
                  "in ps)",
    "auth_inference": "also require the token for inference and metadata",
}


_METAVAR = {int: "N", float: "X", str: "TEXT"}


def _scalar(annotation):
    """(type, choices) of a field annotation, Optional unwrapped."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Union and len(args) == 1:
        annotation = args[0]
    if typing.get_origin(annotation) is typing.Literal:
        return str, list(typing.get_args(annotation))
    if annotation is Path:
        return Path, None
    if annotation in (SecretStr, ByteSize):     # validated by the settings model ("4GiB")
        return str, None
    return annotation, None


def add_settings_flags(p: argparse.ArgumentParser) -> None:
    defaults = Settings.model_construct()
    for name, field in Settings.model_fields.items():
        typ, choices = _scalar(field.annotation)
        default = getattr(defaults, name, None) if field.default_factory is None else "computed"
        env = f"HYBRIDSERVE_{name.upper()}"
        shown = "" if isinstance(default, SecretStr) or default is None else f"; default {default}"
        kw: dict = {"dest": name, "default": None,
                    "help": f"{HELP[name]} ({env}{shown})".replace("%", "%%")}
        if typ is bool:
            kw["action"] = argparse.BooleanOptionalAction
        else:
            kw["type"], kw["metavar"] = typ, _METAVAR.get(typ, "PATH")
            if choices:
                kw["choices"], kw["metavar"] = choices, None
        p.add_argument("--" + name.replace("_", "-"), **kw)


def overrides(args: argparse.Namespace) -> dict:
    """The settings given as flags (the rest come from the environment or defaults)."""
    return {k: getattr(args, k) for k in Settings.model_fields if getattr(args, k, None) is not None}
