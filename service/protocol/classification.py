"""Triton's classification extension: an output as its top-K classes."""
from __future__ import annotations

import numpy as np


def classify(arr: np.ndarray, k: int, labels: list[str] | None = None) -> np.ndarray:
    """Triton classification extension: top-k of the last axis as BYTES 'value:index', or
    'value:index:label' when the output has labels (an index past them gets none)."""
    a = arr if arr.ndim > 1 else arr.reshape(1, -1)
    flat = a.reshape(-1, a.shape[-1])
    k = min(k, flat.shape[1])
    idx = np.argsort(-flat.astype(np.float64), axis=1, kind="stable")[:, :k]
    out = np.empty(idx.shape, dtype=object)
    for r in range(idx.shape[0]):
        for c in range(k):
            i = int(idx[r, c])
            tag = f":{labels[i]}" if labels is not None and i < len(labels) else ""
            out[r, c] = f"{float(flat[r, i]):f}:{i}{tag}".encode()
    return out.reshape(a.shape[:-1] + (k,)) if arr.ndim > 1 else out.reshape(k)
