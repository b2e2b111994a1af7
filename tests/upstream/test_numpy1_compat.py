"""The upstream run's NumPy 1.x view (numpy1_compat): only the test modules it is installed in
see NumPy 1.x's removed names and results; NumPy itself is untouched."""
from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as onp
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from numpy1_compat import install, numpy1  # noqa: E402


def _module_using_numpy() -> types.ModuleType:
    mod = types.ModuleType("fake_upstream_test")
    mod._np, mod.other = onp, 3
    install(mod)
    return mod


def test_install_replaces_only_the_numpy_globals():
    mod = _module_using_numpy()
    assert mod._np is numpy1 and mod.other == 3
    assert not hasattr(onp, "sometrue") and not hasattr(onp, "float")
    assert mod._np.ndarray is onp.ndarray and mod._np.random is onp.random


def test_removed_names():
    np1 = _module_using_numpy()._np
    a = onp.array([[0, 2], [3, 4]])
    assert np1.sometrue(a) and not np1.alltrue(a)
    assert np1.product(a) == 0 and np1.cumproduct(a).tolist() == [0, 0, 0, 0]
    assert np1.round_(onp.array([1.26]), 1).tolist() == [1.3]
    assert isinstance(2.5, np1.float) and np1.int is int and np1.bool is bool
    assert np1.in1d(a, [2, 4]).tolist() == [False, True, False, True]
    assert np1.trapz([1.0, 3.0]) == 2.0 and np1.msort(onp.array([[3], [1]])).tolist() == [[1], [3]]


def test_numpy1_results():
    np1 = _module_using_numpy()._np
    x = onp.arange(5.0)
    assert np1.quantile(x, 0.3, interpolation="lower") == onp.quantile(x, 0.3, method="lower")
    assert np1.percentile(x, 30, interpolation="higher") == 2.0
    assert [i.tolist() for i in np1.nonzero(onp.array(5))] == [[0]]
    assert [i.tolist() for i in np1.nonzero(onp.array(0))] == [[]]
    assert type(np1.atleast_1d(1, 2)) is list and type(np1.atleast_1d(1)) is onp.ndarray
    assert type(np1.meshgrid(x, x)) is list and type(np1.broadcast_arrays(x, x)) is list
    assert type(np1.linalg.eigh(onp.eye(2))) is tuple and type(np1.linalg.qr(onp.eye(2))) is tuple
    a = onp.stack([onp.eye(3) * (i + 1) for i in range(2)])
    b = onp.arange(6.0).reshape(2, 3)          # a stack of vectors, as NumPy 1.x read it
    assert np1.linalg.solve(a, b).tolist() == [[0.0, 1.0, 2.0], [1.5, 2.0, 2.5]]
    with pytest.raises(ValueError):
        onp.linalg.solve(a, b)                 # NumPy 2 itself reads b as a matrix
    assert np1.linalg.norm is onp.linalg.norm
