"""The framework's random state (`mx.random.seed`), shared by `np.random` and the initializers."""
from __future__ import annotations

import numpy as _onp

_state = {"rng": _onp.random.default_rng()}


def seed(seed_state: int, device="all") -> None:
    _state["rng"] = _onp.random.default_rng(int(seed_state))


def generator() -> _onp.random.Generator:
    return _state["rng"]
