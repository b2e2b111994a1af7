"""Server settings: CLI flags and HYBRIDSERVE_* environment variables (pydantic-settings)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, Optional

from pydantic import ByteSize, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

MiB = 1024 * 1024


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HYBRIDSERVE_", extra="ignore",
                                      protected_namespaces=())

    # where and how to listen
    model_store: Path = Path("model_store")
    host: str = "127.0.0.1"           # loopback unless told otherwise (issue 7)
    port: int = 8000
    workers: int = 1
    log_level: Literal["critical", "error", "warning", "info", "debug"] = "info"
    log_json: bool = True
    access_log: bool = False           # per-request access lines cost throughput
    server_name: str = "hybridserve"
    graceful_timeout_s: float = 30.0
    # the Open Inference Protocol's gRPC API beside HTTP, on the same host (0: off); its
    # largest message is max_body_bytes. TLS when both files are given (PEM)
    grpc_port: int = Field(default=8001, ge=0, le=65535)
    grpc_tls_cert: Optional[Path] = None
    grpc_tls_key: Optional[Path] = None
    grpc_reflection: bool = False

    # model lifecycle
    load_on_startup: bool = True
    # every N s each replica/worker re-reads the store manifest and the store's directories
    # and converges to them (uploads, deletes, unloads, config changes made through any
    # replica); 0 disables. `poll_interval_s` is the older name and wins when set.
    store_poll_s: float = 1.0
    poll_interval_s: Optional[float] = None
    # None: detect (a store we cannot write to serves read-only; uploads answer 403)
    store_read_only: Optional[bool] = None
    # staging/trash debris of another process is removed at startup only when its owner is
    # gone (same host) or it is older than this
    staging_stale_s: float = 3600.0
    load_threads: int = 2
    inference_threads: int = Field(default_factory=lambda: max(1, os.cpu_count() or 1))
    # requests whose estimated compute is below this run on the event loop: a thread hop
    # costs more than a tiny MLP (0 disables)
    inline_max_flops: int = 2_000_000
    # BLAS threads per call (threadpoolctl, each worker). None: cores // (workers ×
    # inference_threads × intra_op_threads), at least 1, so concurrent GEMMs never
    # oversubscribe the cores (service/runtime/threads.py); 0: the BLAS library's own default
    blas_threads: Optional[int] = None
    # threads one forward's heavy ops are split over when they are idle (framework intra-op
    # parallelism; an op whose helpers are busy runs unsplit). 1: off — under concurrent
    # requests the helpers cost more than they save
    intra_op_threads: int = 1
    # serve each model's `optimize_for(backend="hybridserve")` graph (BatchNorm folding,
    # channels-last, fused epilogues) when it matches the traced graph at load
    optimize_graphs: bool = True
    # what runs requests: "onnxruntime" serves each model's optimize_for(backend="onnxruntime")
    # graph when it reproduces the NumPy reference on the warm-up inputs (within
    # 1e-4·max(1, max|ref|)), else NumPy (the model's metadata `parameters.engine` and
    # `engine_fallback_reason` say which and why); "numpy": NumPy only
    engine: Literal["onnxruntime", "numpy"] = "onnxruntime"
    # ONNX Runtime execution providers, comma-separated, in order; empty: CUDA when
    # onnxruntime-gpu sees a GPU, then CPU
    ort_providers: str = ""
    # intra-op threads of each ONNX Runtime session (one session per model region, shared by
    # the inference threads). None: max(intra_op_threads, cores // workers): a lone request
    # gets every core, concurrent ones share the pool (service/runtime/threads.py)
    ort_intra_op_threads: Optional[int] = None
    # whether idle ORT threads spin for work (lower latency for a lone request, but each
    # spinning session burns a core between requests)
    ort_spinning: bool = False
    # CPython's GIL hand-over interval (default 5 ms): an inference thread that re-takes the
    # GIL after each NumPy kernel would otherwise wait behind the busy event loop every time
    gil_switch_interval_s: float = 0.0002
    # memory the loaded model versions may hold together (each measured at load: RSS growth
    # across load and warm-up, at least its NumPy buffers); a load beyond it is refused with
    # 507. Bytes or "512MiB", "4GB"; 0 = no budget. Unset: memory_budget_fraction of the
    # memory available at startup (MemAvailable, or the cgroup's headroom when smaller)
    memory_budget: Optional[ByteSize] = None
    memory_budget_fraction: float = Field(default=0.8, gt=0, le=1)
    default_max_batch_size: int = 0    # used when a model has no config; 0 = no batching
    default_batch_delay_us: int = 500
    default_max_queue_size: int = 256  # per model; beyond it → 503 + Retry-After

    # limits (client input is hostile until shown otherwise)
    max_body_bytes: int = 64 * MiB
    max_upload_bytes: int = 1024 * MiB
    max_tensor_elements: int = 64 * 1024 * 1024
    max_graph_nodes: int = 100_000
    max_symbol_bytes: int = 64 * MiB
    max_config_bytes: int = 1 * MiB
    # an encoded image (preprocessed input) is refused by its header's dimensions, before
    # it is decoded, beyond this many pixels (Pillow's own bomb check is ~89 Mpx)
    max_image_pixels: int = 40_000_000
    max_params_bytes: int = 2048 * MiB
    max_json_depth: int = 64           # any JSON document: request bodies, configs, symbols
    # a model whose warm-up shapes would need a single tensor over max_tensor_elements, or
    # more than this many bytes of activations at batch 1, is refused at load
    max_activation_bytes: int = 4096 * MiB
    inference_timeout_s: float = 60.0
    inspect_max_records: int = 10_000
    inspect_max_values: int = 100_000   # hard cap per tensor when include_values is set

    # access control: when set, management/upload/delete/inspect need "Bearer <token>"
    auth_token: Optional[SecretStr] = None
    auth_inference: bool = False        # also require the token for inference/metadata

    def resolved_store(self) -> Path:
        return Path(self.model_store).expanduser().resolve()

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
