"""Static memory plan (static_alloc): output buffers assigned once per input signature, reused by
liveness, and in-place execution of elementwise ops whose input dies at that step.

Planned from one trial run: it gives every step's output shape/dtype and which outputs are views
of other values (reshape, slicing…). A buffer is free again only when every value that lives in it
— the step's output and all views of it — has had its last use. Values that reach a graph output
never live in a planned buffer, because the caller keeps them after the call.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

@dataclass
class MemoryPlan:
    buffers: dict[int, np.ndarray] = field(default_factory=dict)   # step index → out buffer
    n_buffers: int = 0
    planned_bytes: int = 0
    naive_bytes: int = 0
    inplace_steps: list[int] = field(default_factory=list)


def plan_memory(steps, n_inputs: int, out_slots: list[int], vals: list) -> MemoryPlan:
    """`vals` holds every slot's value from a trial run (inputs first)."""
    # root[s]: the slot whose storage s lives in (itself unless s is a view of an input value)
    root = list(range(len(vals)))
    producer: dict[int, int] = {}
    for k, st in enumerate(steps):
        for s in st.outs:
            producer[s] = k
            v = vals[s]
            if isinstance(v, np.ndarray) and v.base is not None:
                for i in st.ins:
                    if isinstance(vals[i], np.ndarray) and np.shares_memory(v, vals[i]):
                        root[s] = root[i]
                        break
    last_use = {s: -1 for s in range(len(vals))}
    for k, st in enumerate(steps):
        for i in st.ins:
            last_use[i] = k
    big = len(steps) + 1
    for s in out_slots:
        last_use[s] = big
    # the life of a storage root ends with the last use of any value living in it
    root_end: dict[int, int] = {}
    for s in range(len(vals)):
        r = root[s]
        root_end[r] = max(root_end.get(r, -1), last_use[s])
    escaping = {root[s] for s in out_slots}

    plan = MemoryPlan()
    free: dict[str, list[np.ndarray]] = {}     # dtype → flat free buffers (best fit by size)
    owner: dict[int, tuple] = {}               # root slot → (flat buffer, its view for the value)
    releases: dict[int, list[int]] = {}        # step → roots whose storage frees after it
    for r, end in root_end.items():
        if r >= n_inputs and end >= 0:
            releases.setdefault(end, []).append(r)
    for k, st in enumerate(steps):
        s = st.outs[0]
        v = vals[s]
        eligible = (st.node.op.out and root[s] == s and s not in escaping
                    and isinstance(v, np.ndarray) and v.size > 0)
        if eligible:
            plan.naive_bytes += v.nbytes
            src = st.ins[0] if st.ins else None
            if (src is not None and st.node.op.is_inplace(st.node.parsed)
                    and root_end.get(root[src], big) == k
                    and root[src] in owner and owner[root[src]][1].shape == v.shape
                    and owner[root[src]][1].dtype == v.dtype and root[src] not in escaping):
                flat, buf = owner.pop(root[src])  # hand the dying input's storage to the output
                releases[k] = [r for r in releases.get(k, []) if r != root[src]]
                plan.inplace_steps.append(k)
            else:
                flat = _best_fit(free.setdefault(v.dtype.str, []), v.size)
                if flat is None:
                    flat = np.empty(v.size, v.dtype)
                    plan.n_buffers += 1
                    plan.planned_bytes += v.nbytes
                buf = flat[:v.size].reshape(v.shape)
            owner[s] = (flat, buf)
            plan.buffers[k] = buf
        for r in releases.get(k, []):
            got = owner.pop(r, None)
            if got is not None:
                free.setdefault(got[0].dtype.str, []).append(got[0])
    return plan


def _best_fit(pool: list[np.ndarray], size: int) -> np.ndarray | None:
    """Take the smallest free buffer that holds `size` elements (any shape: values are views)."""
    fits = [i for i, b in enumerate(pool) if b.size >= size]
    if not fits:
        return None
    return pool.pop(min(fits, key=lambda i: pool[i].size))
