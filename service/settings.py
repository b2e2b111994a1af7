"""Server settings: CLI flags and HYBRIDSERVE_* environment variables (pydantic-settings).
Each field's `description` is its `serve --help` text (cli/flags.py); comments say why."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, Optional

from pydantic import ByteSize, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MiB = 1024 * 1024


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HYBRIDSERVE_", extra="ignore",
                                      protected_namespaces=())

    # where and how to listen
    # a directory (a path or file:///PATH) or s3://BUCKET/PREFIX (docs/s3.md); any other
    # scheme is refused at start
    model_store: str = Field("model_store", description=
        "model repository: a directory, file:///PATH or s3://BUCKET/PREFIX")
    # s3:// stores: the endpoint (else AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, else AWS);
    # credentials always come from the AWS chain (env, shared files, web identity)
    s3_endpoint_url: Optional[str] = Field(None, description=
        "S3 endpoint of an s3:// store (default: AWS_ENDPOINT_URL, else AWS)")
    # object stores: where downloaded versions are kept (default: under ~/.cache, per store
    # URL) and how much they may take (least recently used versions go first)
    store_cache_dir: Optional[str] = Field(None, description=
        "where an s3:// store's downloaded versions are cached (default: "
        "~/.cache/hybridserve/stores/...)")
    store_cache_bytes: ByteSize = Field(ByteSize(10 * 1024 * MiB), description=
        "size limit of that read cache, e.g. 20GiB (least recently used versions are removed "
        "first)")
    host: str = Field("127.0.0.1", description="bind address (loopback unless told otherwise)")
    port: int = Field(8000, description="TCP port")
    workers: int = Field(1, description="worker processes (each polls the store like a replica)")
    log_level: Literal["critical", "error", "warning", "info", "debug"] = Field(
        "info", description="log level")
    log_json: bool = Field(True, description=
        "log one JSON object per line (--no-log-json: plain text)")
    access_log: bool = Field(False, description="log every request (costs throughput)")
    server_name: str = Field("hybridserve", description="name reported by GET /v2")
    graceful_timeout_s: float = Field(30.0, description=
        "seconds in-flight requests get to finish at shutdown")
    # at SIGTERM, readiness answers 503 this long before the server stops accepting
    # (service/cli/draining.py); Kubernetes' preStop sleep does the same from outside
    drain_s: float = Field(0.0, description=
        "seconds readiness answers 503 at SIGTERM before the server stops accepting")
    # the Open Inference Protocol's gRPC API beside HTTP, on the same host; its largest
    # message is max_body_bytes. TLS when both files are given (PEM)
    grpc_port: int = Field(8001, ge=0, le=65535, description=
        "TCP port of the gRPC API (Open Inference Protocol + Triton extensions; 0: off)")
    grpc_tls_cert: Optional[Path] = Field(None, description=
        "PEM certificate chain for gRPC over TLS (with --grpc-tls-key)")
    grpc_tls_key: Optional[Path] = Field(None, description=
        "PEM private key for gRPC over TLS (with --grpc-tls-cert)")
    grpc_reflection: bool = Field(False, description=
        "serve gRPC server reflection (for grpcurl and the like)")

    # model lifecycle
    load_on_startup: bool = Field(True, description="load every model of the store at startup")
    # every N s each replica/worker re-reads the store manifest and the store's directories
    # and converges to them (uploads, deletes, unloads, config changes made through any
    # replica); 0 disables. `poll_interval_s` is the older name and wins when set.
    store_poll_s: float = Field(1.0, description=
        "seconds between polls of the store manifest (0: never)")
    poll_interval_s: Optional[float] = Field(None, description=
        "older name of --store-poll-s (wins when set)")
    # None: detect (a store we cannot write to serves read-only; uploads answer 403)
    store_read_only: Optional[bool] = Field(None, description=
        "serve the store read-only (default: detected)")
    # staging/trash debris of another process is removed at startup only when its owner is
    # gone (same host) or it is older than this
    staging_stale_s: float = Field(3600.0, description=
        "age after which another process's staging debris is removed")
    load_threads: int = Field(2, description="models loaded at once")
    inference_threads: int = Field(
        default_factory=lambda: max(1, os.cpu_count() or 1),
        description="forwards that may run at once per worker (default: cores)")
    # requests whose estimated compute is below this run on the event loop: a thread hop
    # costs more than a tiny MLP (0 disables)
    inline_max_flops: int = Field(2_000_000, description=
        "requests estimated below this many FLOPs run on the event loop (0: never)")
    # BLAS threads per call (threadpoolctl, each worker). None: cores // (workers ×
    # inference_threads × intra_op_threads), at least 1, so concurrent GEMMs never
    # oversubscribe the cores (service/runtime/threads.py); 0: the BLAS library's own default
    blas_threads: Optional[int] = Field(None, description=
        "threads per BLAS call (default: cores / concurrent forwards; 0: the library's own)")
    # threads one forward's heavy ops are split over when they are idle (framework intra-op
    # parallelism; an op whose helpers are busy runs unsplit). 1: off — under concurrent
    # requests the helpers cost more than they save
    intra_op_threads: int = Field(1, description=
        "threads one forward's heavy ops may split over (1: off)")
    # serve each model's `optimize_for(backend="hybridserve")` graph (BatchNorm folding,
    # channels-last, fused epilogues) when it matches the traced graph at load
    optimize_graphs: bool = Field(True, description=
        "serve the optimize_for twin of each graph when it matches the traced one")
    # what runs requests: "onnxruntime" serves each model's optimize_for(backend="onnxruntime")
    # graph when it reproduces the NumPy reference on the warm-up inputs (within
    # 1e-4·max(1, max|ref|)), else NumPy (the model's metadata `parameters.engine` and
    # `engine_fallback_reason` say which and why); "numpy": NumPy only; "openvino": the
    # optional OpenVINO engine (ONNX Runtime where it is missing or fails the check). A model's
    # config `engine` / `precision` overrides this per model (docs/engines.md)
    engine: Literal["onnxruntime", "openvino", "numpy"] = Field("onnxruntime", description=
        "what runs requests: onnxruntime (NumPy where a region cannot lower or the load-time "
        "check fails), openvino (optional package; onnxruntime where missing) or numpy")
    # ONNX Runtime execution providers, comma-separated, in order; empty: CUDA when
    # onnxruntime-gpu sees a GPU, then CPU
    ort_providers: str = Field("", description=
        "ONNX Runtime execution providers, comma-separated (default: CUDA when onnxruntime "
        "reports it, then CPU)")
    # intra-op threads of each ONNX Runtime session (one session per model region, shared by
    # the inference threads). None: max(intra_op_threads, cores // workers): a lone request
    # gets every core, concurrent ones share the pool (service/runtime/threads.py)
    ort_intra_op_threads: Optional[int] = Field(None, description=
        "threads per ONNX Runtime session, shared by the inference threads (default: cores / "
        "workers, or the intra-op threads when larger)")
    # whether idle ORT threads spin for work (lower latency for a lone request, but each
    # spinning session burns a core between requests)
    ort_spinning: bool = Field(False, description=
        "let ONNX Runtime's intra-op threads spin between tasks")
    # sessions each ONNX Runtime region keeps, one per input shape requests bring (all dims but
    # the batch: a model without a config is served at the speed of one whose config fixes its
    # shapes); a full cache of busy shapes runs other shapes on NumPy (docs/engines.md)
    ort_shape_cache: int = Field(default=4, ge=1, le=64, description=
        "ONNX Runtime sessions kept per region, one per input shape (batch dim excepted)")
    # CPython's GIL hand-over interval (default 5 ms): an inference thread that re-takes the
    # GIL after each NumPy kernel would otherwise wait behind the busy event loop every time
    gil_switch_interval_s: float = Field(0.0002, description=
        "CPython GIL switch interval while serving")
    # memory the loaded model versions may hold together (each measured at load: RSS growth
    # across load and warm-up, at least its NumPy buffers); a load beyond it is refused with
    # 507. Bytes or "512MiB", "4GB"; 0 = no budget. Unset: memory_budget_fraction of the
    # memory available at startup (MemAvailable, or the cgroup's headroom when smaller)
    memory_budget: Optional[ByteSize] = Field(None, description=
        "memory the loaded model versions may hold together, e.g. 4GiB; a load beyond it is "
        "refused with 507 (0: no budget; default: --memory-budget-fraction of the memory "
        "available at startup)")
    memory_budget_fraction: float = Field(default=0.8, gt=0, le=1, description=
        "share of the memory available at startup used as the budget when --memory-budget is "
        "not given")
    default_max_batch_size: int = Field(0, description=
        "max_batch_size of a model without config (0: no batching)")
    # per model; beyond it → 503 + Retry-After (a model's config may set its own)
    default_max_queue_size: int = Field(256, description="waiting requests per model before 503")

    # limits (client input is hostile until shown otherwise)
    max_body_bytes: int = Field(64 * MiB, description="largest request body (413 beyond)")
    # a JSON infer body of 256 KiB or more is read for its headers before it is parsed (in a
    # thread): the JSON outside its inputs' `data` arrays (names, shapes, parameters, outputs)
    # may hold at most this many bytes, and it is checked against the model first
    max_json_header_bytes: int = Field(1 * MiB, description=
        "largest JSON outside the inputs' data arrays of a large infer body (400 beyond, "
        "before the body is parsed)")
    max_upload_bytes: int = Field(1024 * MiB, description=
        "largest upload or load-with-files body (413 beyond)")
    max_tensor_elements: int = Field(64 * 1024 * 1024, description=
        "largest input tensor, in elements (400 beyond)")
    max_graph_nodes: int = Field(100_000, description="largest graph accepted, in nodes")
    max_symbol_bytes: int = Field(64 * MiB, description="largest *-symbol.json file")
    max_config_bytes: int = Field(1 * MiB, description="largest config.json")
    # an encoded image (preprocessed input) is refused by its header's dimensions, before
    # it is decoded, beyond this many pixels (Pillow's own bomb check is ~89 Mpx)
    max_image_pixels: int = Field(40_000_000, description=
        "largest encoded image accepted, in pixels (checked before decoding)")
    max_params_bytes: int = Field(2048 * MiB, description="largest .params file")
    # any JSON document: request bodies, configs, symbols
    max_json_depth: int = Field(64, description="deepest JSON document accepted")
    # a model whose warm-up shapes would need a single tensor over max_tensor_elements, or
    # more than this many bytes of activations at batch 1, is refused at load
    max_activation_bytes: int = Field(4096 * MiB, description=
        "refuse a model whose activations at its largest warm-up batch exceed this")
    inference_timeout_s: float = Field(60.0, description=
        "seconds before a request is answered 504")
    # slow clients (api/connguard.py): a request's header must be complete this long after
    # the connection opens (or after its first byte on a kept-alive connection); a body may
    # pause this long between two reads; an idle kept-alive connection is closed after
    # keepalive_timeout_s. Each 0: never. Beyond max_connections open connections, a new one
    # closes the one idle (or sending its header) the longest, else it is refused (503)
    header_timeout_s: float = Field(10.0, description=
        "seconds a request's header may take to arrive (408 and close; 0: no limit)")
    body_timeout_s: float = Field(30.0, description=
        "seconds a request body may pause between two reads (408 and close; 0: no limit)")
    keepalive_timeout_s: float = Field(5.0, description=
        "seconds an idle kept-alive connection stays open")
    max_connections: int = Field(1000, description=
        "open connections per worker; beyond, the longest-idle one is closed (0: no cap)")
    inspect_max_records: int = Field(10_000, description="most records one inspection returns")
    # hard cap per tensor when include_values is set
    inspect_max_values: int = Field(100_000, description=
        "most values per tensor an inspection returns")
    # an inspection whose response would be larger (estimated from each record's value count
    # before it is built) is refused with 400 naming `filter` and `max_values`
    inspect_max_response_bytes: int = Field(64 * MiB, description=
        "largest inspection response, estimated before it is built (400 beyond: narrow with "
        "filter or max_values)")

    # access control: when set, management/upload/delete/inspect need "Bearer <token>"
    auth_token: Optional[SecretStr] = Field(None, description=
        "bearer token for management (prefer HYBRIDSERVE_AUTH_TOKEN: flags show in ps)")
    auth_inference: bool = Field(False, description=
        "also require the token for inference and metadata")

    @field_validator("model_store", mode="before")
    @classmethod
    def _store_spec(cls, v):
        return str(v) if isinstance(v, os.PathLike) else v

    def poll_seconds(self) -> float:
        return self.poll_interval_s if self.poll_interval_s is not None else self.store_poll_s

    def check(self) -> None:
        """Refuse contradictory security settings at startup (fail closed)."""
        if self.auth_inference and self.auth_token is None:
            raise ValueError("HYBRIDSERVE_AUTH_INFERENCE=true needs HYBRIDSERVE_AUTH_TOKEN: "
                             "without a token nobody could be let in")
        if (self.grpc_tls_cert is None) != (self.grpc_tls_key is None):
            raise ValueError("gRPC TLS needs both HYBRIDSERVE_GRPC_TLS_CERT and "
                             "HYBRIDSERVE_GRPC_TLS_KEY")
        if self.grpc_port and self.grpc_port == self.port:
            raise ValueError(f"--grpc-port {self.grpc_port} is the HTTP --port too: choose "
                             "another (0 turns gRPC off)")
