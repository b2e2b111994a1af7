"""How many threads the model kernels may use in one worker process.

Every inference thread calls BLAS, and OpenBLAS's own threads busy-wait between GEMMs: with
W workers × T inference threads × I intra-op threads × B BLAS threads above the core count C,
the GEMMs spin against each other (and against the load generator or neighbours), which made a
50 ms ResNet-18 forward take 300 ms under load. So by default each BLAS call gets
C // (W × T × I) threads, at least one.
ONNX Runtime sessions get all of a worker's cores (one shared, non-spinning pool; see resolve).
Intra-op threads (framework/ops/parallel.py, off by default) split one forward's ops over idle
cores; they shorten a lone request a little but cost throughput as soon as forwards run
concurrently (measured: bench/server/RESULTS-issue5-resnet.md).
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

from threadpoolctl import threadpool_info, threadpool_limits

from framework.ops import set_intra_op_threads

from ..settings import Settings
from .compiled import OrtOptions

log = logging.getLogger("hybridserve.threads")


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ThreadPolicy:
    blas: int | None          # BLAS threads per call; None = the library's own default
    intra_op: int             # threads one op may split over (1 = off)
    ort_intra_op: int = 1     # intra-op threads of each ONNX Runtime session


def resolve(s: Settings, cores: int | None = None) -> ThreadPolicy:
    cores = cores or available_cores()
    intra = max(1, s.intra_op_threads)
    forwards = max(1, s.workers) * max(1, s.inference_threads)
    share = max(1, cores // (forwards * intra))
    blas = share if s.blas_threads is None else (s.blas_threads or None)
    # a session's pool is shared by every inference thread that runs it, so it spans the
    # worker's cores: a lone request gets them all, and under load each run's calling thread
    # does the shards no idle pool thread takes (non-spinning pools: the same CPU time per
    # forward and no lower throughput than 1-thread sessions at 2 and 4 concurrent forwards,
    # bench/RESULTS.md)
    ort = s.ort_intra_op_threads or max(intra, cores // max(1, s.workers), 1)
    return ThreadPolicy(blas, intra, max(1, ort))


def ort_options(s: Settings, cores: int | None = None) -> OrtOptions:
    """The ONNX Runtime sessions' options under the settings and the thread policy."""
    providers = tuple(p.strip() for p in s.ort_providers.split(",") if p.strip())
    return OrtOptions(providers or None, resolve(s, cores).ort_intra_op, s.ort_spinning,
                      s.ort_shape_cache)


class AppliedPolicy:
    """The policy in force in this process; `restore()` undoes it (server stop)."""

    def __init__(self, policy: ThreadPolicy):
        self.policy = policy
        self._limits: Any = None
        if policy.blas is not None:
            try:
                self._limits = threadpool_limits(policy.blas, user_api="blas")
                # threadpoolctl lets only one thread at a time set OpenBLAS's process-wide
                # limit and silently ignores the others (e.g. a server started in a thread of
                # a process whose other thread already set it)
                got = {d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"}
                if got - {policy.blas}:
                    log.warning("BLAS threads stay at %s, not %d: another thread of this "
                                "process controls them", sorted(got), policy.blas)
            except (OSError, RuntimeError, ValueError, AttributeError) as e:  # ctypes/BLAS
                # a BLAS library threadpoolctl cannot drive keeps its default
                log.warning("cannot limit BLAS threads: %r", e)
        # BLAS is limited above: the split must not reset it
        self._prev_intra = set_intra_op_threads(policy.intra_op, limit_blas=False)

    def restore(self) -> None:
        set_intra_op_threads(self._prev_intra, limit_blas=False)
        if self._limits is not None:
            self._limits.restore_original_limits()
            self._limits = None


def apply(s: Settings) -> AppliedPolicy:
    p = resolve(s)
    log.info("kernel threads: BLAS %s, intra-op %d, onnxruntime intra-op %d per session (cores "
             "%d, workers %d, inference threads %d)",
             p.blas if p.blas is not None else "library default", p.intra_op, p.ort_intra_op,
             available_cores(), s.workers, s.inference_threads)
    return AppliedPolicy(p)
