"""Per model-version statistics in Triton's `model_stats` shape (cumulative since load).

Updated only from the event-loop thread, so plain integers are enough.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Duration:
    count: int = 0
    ns: int = 0

    def add(self, ns: int, n: int = 1) -> None:
        self.count += n
        self.ns += ns

    def doc(self) -> dict:
        return {"count": self.count, "ns": self.ns}


@dataclass
class BatchStat:
    compute_input: Duration = field(default_factory=Duration)
    compute_infer: Duration = field(default_factory=Duration)
    compute_output: Duration = field(default_factory=Duration)


class ModelStats:
    def __init__(self, name: str, version: str):
        self.name, self.version = name, version
        self.last_inference = 0
        self.inference_count = 0
        self.execution_count = 0
        self.success = Duration()
        self.fail = Duration()
        self.queue = Duration()
        self.compute_input = Duration()
        self.compute_infer = Duration()
        self.compute_output = Duration()
        self.batches: dict[int, BatchStat] = {}

    def request_done(self, ok: bool, total_ns: int, queue_ns: int = 0, input_ns: int = 0,
                     output_ns: int = 0, batch_size: int = 0) -> None:
        self.last_inference = time.time_ns() // 1_000_000
        if ok:
            self.success.add(total_ns)
            self.queue.add(queue_ns)
            self.compute_input.add(input_ns)
            self.compute_output.add(output_ns)
            b = self.batches.get(batch_size) if batch_size else None
            if b is not None:
                b.compute_input.add(input_ns)
                b.compute_output.add(output_ns)
        else:
            self.fail.add(total_ns)

    def execution(self, batch_size: int, infer_ns: int, requests: int = 1) -> None:
        """One model execution covering `batch_size` items from `requests` requests."""
        self.execution_count += 1
        self.inference_count += batch_size
        self.compute_infer.add(infer_ns, requests)
        b = self.batches.get(batch_size)
        if b is None:
            b = self.batches[batch_size] = BatchStat()
        b.compute_infer.add(infer_ns)

    def doc(self) -> dict:
        zero = {"count": 0, "ns": 0}
        return {
            "name": self.name, "version": self.version,
            "last_inference": self.last_inference,
            "inference_count": self.inference_count,
            "execution_count": self.execution_count,
            "inference_stats": {
                "success": self.success.doc(), "fail": self.fail.doc(),
                "queue": self.queue.doc(), "compute_input": self.compute_input.doc(),
                "compute_infer": self.compute_infer.doc(),
                "compute_output": self.compute_output.doc(),
                "cache_hit": dict(zero), "cache_miss": dict(zero)},
            "batch_stats": [{"batch_size": bs, "compute_input": b.compute_input.doc(),
                             "compute_infer": b.compute_infer.doc(),
                             "compute_output": b.compute_output.doc()}
                            for bs, b in sorted(self.batches.items())],
            "response_stats": {},
            "memory_usage": [],
        }
