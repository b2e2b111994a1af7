"""Reductions: 1.x ops (exclude, full reduction → (1,)) and 2.x `_npi_*` (NumPy semantics)."""
import numpy as np
import pytest

from framework import np as np_
from framework.ops import get_op
from _helpers import close, rnd, run_op

X = rnd(2, 3, 4, 5, seed=7)


@pytest.mark.parametrize("name,ref", [("sum", np.sum), ("mean", np.mean), ("max", np.max),
                                      ("min", np.min), ("prod", np.prod),
                                      ("nansum", np.nansum)])
def test_legacy_reduce(name, ref):
    close(run_op(name, X, axis=(1, 3)), ref(X, axis=(1, 3)), rtol=1e-5)
    close(run_op(name, X, axis=1, keepdims=True), ref(X, axis=1, keepdims=True), rtol=1e-5)
    full = run_op(name, X)
    assert full.shape == (1,)                    # 1.x: a full reduction has shape (1,)
    close(full, [ref(X)], rtol=1e-4)
    # exclude=True reduces every axis except the listed ones
    close(run_op(name, X, axis=1, exclude=True), ref(X, axis=(0, 2, 3)), rtol=1e-4)


def test_legacy_attr_strings():
    out = run_op("mean", X, axis="(2, 3)", keepdims="True")
    assert out.shape == (2, 3, 1, 1)


def test_nansum_ignores_nan():
    x = X.copy()
    x[0, 0, 0, 0] = np.nan
    close(run_op("nansum", x, axis=0), np.nansum(x, axis=0))


def test_legacy_argmax():
    out = run_op("argmax", X, axis=1)
    assert out.dtype == np.float32                # 1.x returns indices in the input dtype
    np.testing.assert_array_equal(out, np.argmax(X, axis=1))
    assert run_op("argmin", X, axis=-1, keepdims=True).shape == (2, 3, 4, 1)
    assert run_op("argmax", X).shape == (1,)


def test_moments():
    m, v = run_op("moments", X, axes=(2, 3))
    close(m, X.mean(axis=(2, 3)), rtol=1e-5)
    close(v, X.var(axis=(2, 3)), rtol=1e-4)
    m, v = run_op("moments", X, axes=(1,), keepdims=True)
    assert m.shape == v.shape == (2, 1, 4, 5)


def test_legacy_norm():
    close(run_op("norm", X), [np.sqrt((X.astype(np.float64) ** 2).sum())], rtol=1e-5)
    close(run_op("norm", X, ord=1, axis=(1,)), np.abs(X).sum(axis=1), rtol=1e-5)


NP = [("_npi_sum", np.sum), ("_npi_mean", np.mean), ("_npi_max", np.max), ("_npi_min", np.min),
      ("_npi_prod", np.prod)]


@pytest.mark.parametrize("name,ref", NP, ids=[n for n, _ in NP])
def test_np_reduce(name, ref):
    close(run_op(name, X, axis=(1,)), ref(X, axis=1), rtol=1e-5)
    close(run_op(name, X, axis=(-1, 0), keepdims=True), ref(X, axis=(-1, 0), keepdims=True),
          rtol=1e-5)
    full = run_op(name, X)
    assert full.shape == ()
    close(full, ref(X), rtol=1e-4)
    assert run_op(name, X, axis=()).shape == X.shape  # axis=() reduces nothing


def test_np_reduce_dtypes():
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert run_op("_npi_sum", i, axis=(1,)).dtype == np.int32
    assert run_op("_npi_sum", i > 2).dtype == np.float32   # as MXNet 2.0.0b1
    assert run_op("_npi_mean", i, dtype="float32").dtype == np.float32
    assert run_op("_npi_mean", i).dtype == np.float32
    assert run_op("_npi_sum", X, dtype="float64").dtype == np.float64
    close(run_op("_npi_sum", X, axis=(0,), initial=1.0), X.sum(axis=0) + 1, rtol=1e-5)
    close(run_op("_npi_max", X, initial=100.0), 100.0)


def test_np_reduce_attr_spelling():
    op = get_op("_npi_sum")
    a = op.parse_attrs({"axis": "[-1]", "dtype": "None", "initial": "None", "keepdims": "0"})
    assert a.axis == (-1,) and a.dtype is None and a.initial is None and a.keepdims is False
    assert op.format_attrs(a) == {"axis": "[-1]", "dtype": "None", "initial": "None",
                                  "keepdims": "0"}
    op = get_op("_npi_mean")
    assert op.parse_attrs({"axis": "None", "dtype": "float32"}).dtype == np.float32


def test_std_var():
    """As MXNet 2.0: the statistic, and the mean it is taken about as a hidden second output."""
    std, mean = run_op("_npi_std", X, axis=(1,))
    close(std, X.std(axis=1), rtol=1e-4)
    close(mean, X.mean(axis=1), rtol=1e-4)
    var, mean = run_op("_npi_var", X, axis=(1, 2), ddof=1)
    close(var, X.var(axis=(1, 2), ddof=1), rtol=1e-4)
    close(mean, X.mean(axis=(1, 2)), rtol=1e-4)
    assert [o.shape for o in run_op("_npi_var", X, keepdims=True)] == [(1, 1, 1, 1)] * 2
    op = get_op("_npi_std")
    assert op.n_outputs(op.parse_attrs({})) == 2 and op.n_visible(op.parse_attrs({})) == 1
    close(np_.std(np_.array(X), axis=1).asnumpy(), X.std(axis=1), rtol=1e-4)   # front-end: 1


def test_np_argmax_int64():
    out = run_op("_npi_argmax", X, axis=1)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, X.argmax(axis=1))
    assert run_op("_npi_argmin", X).shape == ()
    assert run_op("_npi_argmin", X, axis=-1, keepdims=True).shape == (2, 3, 4, 1)


def test_any_all_cumsum():
    b = X > 0
    np.testing.assert_array_equal(run_op("_npi_any", b, axis=(1,)), b.any(axis=1))
    np.testing.assert_array_equal(run_op("_npi_all", b), b.all())
    close(run_op("_npi_cumsum", X, axis=2), np.cumsum(X, axis=2), rtol=1e-5)
    assert run_op("_npi_cumsum", X).shape == (X.size,)
    assert run_op("_npi_cumsum", np.ones(3, np.int32), dtype="int64").dtype == np.int64


@pytest.mark.parametrize("flag,ordv,axis,ref", [
    (-2, 2, None, lambda x: np.sqrt((x ** 2).sum())),
    (1, 2, (-1,), lambda x: np.sqrt((x ** 2).sum(-1))),
    (-1, 1, (2,), lambda x: np.abs(x).sum(2)),
    (-1, 3, (3,), lambda x: (np.abs(x) ** 3).sum(3) ** (1 / 3)),
    (1, 2, (2, 3), lambda x: np.sqrt((x ** 2).sum((2, 3)))),
    (0, 2, (2, 3), lambda x: np.linalg.norm(x, 2, axis=(2, 3))),
    (2, 2, (2, 3), lambda x: np.linalg.norm(x, "nuc", axis=(2, 3))),
])
def test_np_norm(flag, ordv, axis, ref):
    """The norm, then MXNet 2.0's three hidden workspace outputs (their shapes: SVD factors
    for a matrix 2-norm, empty for a vector norm)."""
    out, *hidden = run_op("_npi_norm", X, ord=ordv, axis=axis, flag=flag)
    close(out, ref(X.astype(np.float64)), rtol=1e-4)
    if axis is not None and len(axis) == 2 and ordv == 2:
        r, c = X.shape[2], X.shape[3]
        assert [h.shape for h in hidden] == [(X.shape[0] * X.shape[1], r, r),
                                             (X.shape[0] * X.shape[1], min(r, c)),
                                             (X.shape[0] * X.shape[1], r, c)]
    elif axis is None or len(axis) == 1:
        assert [h.size for h in hidden] == [0, 0, 0]
