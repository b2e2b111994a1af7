"""np.diagonal/diagflat/insert/delete/diff/ediff1d/resize, cross, polyval, fabs, logaddexp and
linalg.qr/tensorinv/tensorsolve/norm(ord=2): NumPy's results, and the ones MXNet gives an
operator trace in a hybridized block."""
import numpy as onp
import pytest

from framework import gluon, np

R = onp.random.RandomState(0)
A = R.rand(2, 3, 4).astype(onp.float32)

CASES = [
    ("diagonal", (A, 1, 1, 2), {}),
    ("diagflat", (A[0, 0], -1), {}),
    ("insert", (onp.arange(5.0), 2, 9.0), {}),
    ("insert", (A, slice(0, 2), 7.0), {"axis": 2}),
    ("insert", (onp.arange(5.0), onp.array([1, 3]), onp.array([8.0, 9.0])), {}),
    ("delete", (A, [0, 2], 1), {}),
    ("delete", (onp.arange(6.0), slice(0, 5, 2)), {}),
    ("delete", (onp.arange(6.0), -1), {}),
    ("diff", (A, 2, 2), {}),
    ("ediff1d", (A,), {"to_begin": onp.array([5.0]), "to_end": 3.0}),
    ("resize", (A, (5, 7)), {}),
    ("cross", (R.rand(4, 3), R.rand(4, 3)), {}),
    ("cross", (R.rand(3, 2), R.rand(3, 2)), {"axisa": 0, "axisb": 0}),
    ("polyval", (onp.array([1.0, -2.0, 3.0]), A), {}),
    ("fabs", (A - 0.5,), {}),
    ("logaddexp", (A, A[0]), {}),
    ("logaddexp", (A, 2.0), {}),
]


def _mx(v):
    return np.array(v, dtype=v.dtype) if isinstance(v, onp.ndarray) else v


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(name, args, kwargs):
    got = getattr(np, name)(*[_mx(a) for a in args], **{k: _mx(v) for k, v in kwargs.items()})
    want = getattr(onp, name)(*args, **kwargs)
    assert got.shape == want.shape
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


class _Edit(gluon.HybridBlock):
    def forward(self, x):
        return (np.diagonal(x, 0, 1, 2), np.diff(x, 1, 1), np.insert(x, 1, 0.0, axis=2),
                np.delete(x, 0, axis=1), np.ediff1d(x, to_end=1.0), np.resize(x, (3, 9)),
                np.cross(x[:, :, :3], x[:, :, 1:]), np.logaddexp(x, 1.0),
                np.linalg.tensorinv(x[0, :2, :2] + 3, 1))


def test_traced_in_hybridized_block():
    net = _Edit()
    x = np.array(A)
    eager = net(x)
    net.hybridize()
    traced = net(x)
    ops = {n.op.name for n in net._cached_graph[1].topo() if n.op is not None}
    for op in ("_npi_diagonal", "_npi_diff", "_npi_insert_scalar", "_npi_delete",
               "_npi_ediff1d", "_npi_resize_fallback", "_npi_cross", "_npi_logaddexp_scalar",
               "_npi_tensorinv"):
        assert op in ops
    for e, t in zip(eager, traced):
        onp.testing.assert_allclose(e.asnumpy(), t.asnumpy(), rtol=1e-5)


def test_linalg_additions():
    m = np.array(R.rand(3, 5, 4), dtype=onp.float64)
    q, r = np.linalg.qr(m)
    onp.testing.assert_allclose(onp.matmul(q.asnumpy(), r.asnumpy()), m.asnumpy(), atol=1e-12)
    t = R.rand(4, 6, 8, 3)
    onp.testing.assert_allclose(np.linalg.tensorinv(np.array(t, dtype=onp.float64), 2).asnumpy(),
                                onp.linalg.tensorinv(t, 2), rtol=1e-8)
    a, b = R.rand(6, 4, 2, 3, 4), R.rand(6, 4)
    want = onp.linalg.tensorsolve(a, b)
    got = np.linalg.tensorsolve(np.array(a, dtype=onp.float64), np.array(b, dtype=onp.float64))
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    mat = R.rand(3, 4)
    assert float(np.linalg.norm(np.array(mat, dtype=onp.float64), 2)) == \
        pytest.approx(onp.linalg.norm(mat, 2))
    with pytest.raises(NotImplementedError):
        np.linalg.qr(m, mode="complete")
