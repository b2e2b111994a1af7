"""Prometheus metrics. Each app owns its own CollectorRegistry (several apps can share a
process, e.g. in tests); per-label children are cached so the hot path is one dict lookup."""
from __future__ import annotations

from prometheus_client import (CollectorRegistry, Counter, Gauge, Histogram,
                               disable_created_metrics, generate_latest)

from .memory import rss_bytes

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
        self.memory_budget = Gauge("hybridserve_memory_budget_bytes",
                                   "Memory the loaded model versions may hold together (0: none)",
                                   registry=r)
        self.memory_held = Gauge("hybridserve_memory_held_bytes",
                                 "Memory held by the loaded model versions (measured at load)",
                                 registry=r)
        self.model_memory = Gauge("hybridserve_model_memory_bytes",
                                  "Memory one loaded model version holds (measured at load)", lbl,
                                  registry=r)
        # 1 per loaded version, labelled with what runs its requests (docs/engines.md)
        self.engine = Gauge("hybridserve_model_engine",
                            "Engine and precision serving a loaded model version (always 1)",
                            (*lbl, "engine", "precision"), registry=r)
        self._engines: dict[tuple[str, str], tuple[str, str]] = {}
        self.resident = Gauge("hybridserve_process_resident_bytes",
                              "Resident memory of this server process", registry=r)
        self.resident.set_function(rss_bytes)
        self._children: dict[tuple, tuple] = {}
        self._failed: set[tuple[str, str, str]] = set()
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

    def set_engine(self, name: str, version: str, engine: str, precision: str) -> None:
        old = self._engines.pop((name, version), None)
        if old is not None:
            self.engine.remove(name, version, *old)
        self._engines[(name, version)] = (engine, precision)
        self.engine.labels(name, version, engine, precision).set(1)

    def failed(self, name: str, version: str, code: int) -> None:
        self._failed.add((name, version, str(code)))
        self.failures.labels(name, version, str(code)).inc()

    def forget(self, name: str, version: str) -> None:
        """Drop an unloaded version's series: a store that sees many versions would otherwise
        keep every one's counters and histograms forever."""
        self._children.pop((name, version), None)
        for m in (self.requests, self.latency, self.queue, self.batch, self.queue_depth,
                  self.model_memory):
            try:
                m.remove(name, version)
            except KeyError:
                pass
        engine = self._engines.pop((name, version), None)
        if engine is not None:
            self.engine.remove(name, version, *engine)
        for key in [k for k in self._failed if k[:2] == (name, version)]:
            self._failed.discard(key)
            self.failures.remove(*key)

    def render(self) -> bytes:
        return generate_latest(self.registry)
