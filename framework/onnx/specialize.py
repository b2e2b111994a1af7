"""A bounded cache of shape-specialized sessions: least recently used out, frequent shapes in.

A compiled region builds one ONNX Runtime session per input-shape signature it is called with
(runtime.py), so that ORT plans every tensor statically (MXNet's `static_shape` cached op does
the same). Sessions hold weights and arenas, so at most `capacity` stay. When the cache is full a
new signature evicts the least recently used one only if it has been asked for more often than
that one was used since it last aged (a TinyLFU-style admission): a stream of one-off shapes
then runs on the region's fallback (the NumPy kernels) instead of evicting the hot shapes and
rebuilding them. Counts halve every `16 × capacity` lookups, so a shape that went cold loses its
claim.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Generic, Hashable, TypeVar

V = TypeVar("V")
ENV = "HYBRIDSERVE_ORT_SHAPE_CACHE"
DEFAULT_CAPACITY = 4


def default_capacity() -> int:
    """`HYBRIDSERVE_ORT_SHAPE_CACHE` when set to a positive integer, else 4."""
    try:
        return max(1, int(os.environ.get(ENV, "")))
    except ValueError:
        return DEFAULT_CAPACITY


class _Entry(Generic[V]):
    __slots__ = ("value", "uses", "nbytes")

    def __init__(self, value: V, nbytes: int):
        self.value, self.uses, self.nbytes = value, 1, nbytes


class ShapeCache(Generic[V]):
    """`get(key)` on every call; on a miss `admit(key)` says whether to build, and `put` keeps
    the built value (evicting as admitted). Thread-safe; lookups take no lock."""

    def __init__(self, capacity: int):
        self.capacity = max(1, int(capacity))
        self._entries: OrderedDict[Hashable, _Entry[V]] = OrderedDict()
        self._asked: dict[Hashable, int] = {}      # misses of keys not in the cache
        self._lookups = 0
        self._lock = threading.Lock()
        self.evictions = 0

    def get(self, key: Hashable) -> V | None:
        self._lookups += 1
        if self._lookups >= 16 * self.capacity:
            self._age()
        e = self._entries.get(key)
        if e is None:
            return None
        e.uses += 1
        try:
            self._entries.move_to_end(key)
        except KeyError:               # evicted meanwhile: still usable for this call
            pass
        return e.value

    def admit(self, key: Hashable) -> bool:
        """Whether a session for `key` (a miss) should be built now."""
        with self._lock:
            if key in self._entries or len(self._entries) < self.capacity:
                return True
            asked = self._asked.get(key, 0) + 1
            if len(self._asked) < 8 * self.capacity or key in self._asked:
                self._asked[key] = asked
            victim = next(iter(self._entries.values()))
            return asked > victim.uses

    def put(self, key: Hashable, value: V, nbytes: int = 0) -> None:
        with self._lock:
            self._asked.pop(key, None)
            self._entries[key] = _Entry(value, nbytes)
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
                self.evictions += 1

    def _age(self) -> None:
        with self._lock:
            self._lookups = 0
            for e in self._entries.values():
                e.uses //= 2
            self._asked = {k: n // 2 for k, n in self._asked.items() if n > 1}

    def reset_counts(self) -> None:
        """Forget how often each shape was used (e.g. by a warm-up: calls that say nothing
        about the shapes real traffic brings); the recency order stays."""
        with self._lock:
            for e in self._entries.values():
                e.uses = 0
            self._asked.clear()

    def keys(self) -> list[Hashable]:
        """Cached keys, least recently used first."""
        return list(self._entries)

    def values(self) -> list[V]:
        return [e.value for e in list(self._entries.values())]

    def nbytes(self) -> int:
        """Memory the cached values were measured to take when built."""
        return sum(e.nbytes for e in list(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)
