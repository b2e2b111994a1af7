"""Prometheus metrics. Each app owns its own CollectorRegistry (several apps can share a
process, e.g. in tests); per-label children are cached so the hot path is one dict lookup."""
from __future__ import annotations

from prometheus_client import (CollectorRegistry, Counter, Gauge, Histogram,
                               disable_created_metrics, generate_latest)

disable_created_metrics()      # no *_created series: they double the exposition for no use

_LAT_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0,
                2.5, 5.0, 10.0)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry(auto_describe=True)
        lbl = ("model", "version")
        self.requests = Counter("hybridserve_inference_requests", "Inference requests received",
                                lbl, registry=r)
        self.failures = Counter("hybridserve_inference_failures",
                                "Inference requests that failed", (*lbl, "code"), registry=r)
        self.latency = Histogram("hybridserve_inference_latency_seconds",
                                 "End-to-end inference latency in the server", lbl,
                                 buckets=_LAT_BUCKETS, registry=r)
        self.queue = Histogram("hybridserve_queue_time_seconds",
                               "Time requests waited in a dynamic-batching queue", lbl,
                               buckets=_LAT_BUCKETS, registry=r)
        self.batch = Histogram("hybridserve_batch_size", "Items per model execution", lbl,
                               buckets=_BATCH_BUCKETS, registry=r)
        self.loaded = Gauge("hybridserve_models_loaded", "Model versions loaded and ready",
                            registry=r)
        self.load_time = Histogram("hybridserve_model_load_seconds",
                                   "Time to load, compile and warm a model version", ("model",),
                                   buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
                                   registry=r)
        self.load_failures = Counter("hybridserve_model_load_failures",
                                     "Model versions that failed to load", ("model",), registry=r)
        self.queue_depth = Gauge("hybridserve_queue_depth", "Requests waiting in a batching queue",
                                 lbl, registry=r)
        self.http = Counter("hybridserve_http_responses", "HTTP responses by status class",
                            ("code",), registry=r)
        self.store_generation = Gauge("hybridserve_store_generation",
                                      "Store manifest generation this process has applied",
                                      registry=r)
        self._children: dict[tuple, tuple] = {}
        self._http = {c: self.http.labels(c) for c in ("1xx", "2xx", "3xx", "4xx", "5xx")}

    def http_class(self, status: int):
        return self._http.get(f"{status // 100}xx") or self.http.labels(f"{status // 100}xx")

    def model(self, name: str, version: str) -> tuple:
        """(requests, latency, queue, batch) children for one model version."""
        key = (name, version)
        c = self._children.get(key)
        if c is None:
            c = self._children[key] = (self.requests.labels(name, version),
                                       self.latency.labels(name, version),
                                       self.queue.labels(name, version),
                                       self.batch.labels(name, version))
        return c

    def failed(self, name: str, version: str, code: int) -> None:
        self.failures.labels(name, version, str(code)).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
