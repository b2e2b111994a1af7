"""`mxnet.test_utils` for the upstream run: the comparison and data helpers MXNet's unit tests
import, written for hybridserve (CPU only, NumPy semantics always on).

Tolerances follow MXNet's documented defaults per dtype; comparisons convert framework arrays to
NumPy and use NumPy's `allclose`, reporting the worst element on failure.
"""
from __future__ import annotations

import contextlib
import os
import sys

import numpy as np

import framework as mx
from framework.numpy_extension import use_np, use_np_default_dtype  # noqa: F401

_RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5}
_ATOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20}
_device = [mx.cpu()]


def default_device():
    return _device[0]


def set_default_device(device) -> None:
    _device[0] = device


default_context = default_device


def default_dtype():
    return np.float32


def default_rtols():
    return dict(_RTOL)


def default_atols():
    return dict(_ATOL)


def effective_dtype(dat):
    return np.dtype(dat.dtype)


def _tol(x, tol, table):
    if tol is not None and not isinstance(tol, dict):
        return tol
    dt = np.dtype(getattr(x, "dtype", np.asarray(x).dtype))
    return (tol or {}).get(dt, table.get(dt, 0))


def get_tols(x, y, rtol, atol):
    return (max(_tol(x, rtol, _RTOL), _tol(y, rtol, _RTOL)),
            max(_tol(x, atol, _ATOL), _tol(y, atol, _ATOL)))


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    return _RTOL.get(np.dtype(dtype), 0) if rtol is None else rtol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    return _ATOL.get(np.dtype(dtype), 0) if atol is None else atol


def _np(x):
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return np.asarray(x)


def same(a, b) -> bool:
    return np.array_equal(_np(a), _np(b))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True) -> bool:
    a, b = _np(a), _np(b)
    if not use_broadcast and a.shape != b.shape:
        return False
    return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)) -> None:
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _np(a), _np(b)
    if not use_broadcast:
        assert a.shape == b.shape, f"shape mismatch: {a.shape} vs {b.shape}"
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    a64, b64 = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
    viol = np.abs(a64 - b64) / (atol + rtol * np.abs(b64) + 1e-300)
    viol = np.where(np.isnan(viol), np.inf, viol)
    idx = np.unravel_index(int(np.argmax(viol)), viol.shape) if viol.size else ()
    raise AssertionError(
        f"{names[0]} and {names[1]} differ beyond rtol={rtol:g}, atol={atol:g}: worst at {idx}: "
        f"{a64[idx] if viol.size else a64} vs {b64[idx] if viol.size else b64}")


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True) -> None:
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")) -> None:
    a, b = np.copy(_np(a)), np.copy(_np(b))
    nan = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs) -> None:
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{f} did not raise {exception_type.__name__}")


def random_arrays(*shapes):
    arrays = [np.array(np.random.randn(), dtype=np.float32) if len(s) == 0
              else np.random.randn(*s).astype(np.float32) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=np.float32):
    arrays = [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return tuple(int(np.random.randint(low, d + 1)) for d in (dim0, dim1, dim2))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return tuple(int(v) for v in np.random.randint(low, dim + 1, size=num_dim))


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    if stype != "default":
        raise NotImplementedError("sparse storage is not part of hybridserve")
    return mx.np.array(random_arrays(shape), dtype=dtype or np.float32)


def collapse_sum_like(a, shape):
    """Sum `a` over the axes that broadcasting to it expanded from `shape`."""
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and a.shape[lead + i] != 1)
    return a.sum(axis=axes).reshape(shape) if axes else a


@contextlib.contextmanager
def environment(*args):
    """`with environment(name, value)` / `with environment({name: value})`: set, then restore."""
    env = args[0] if len(args) == 1 else {args[0]: args[1]}
    saved = {k: os.environ.get(k) for k in env}

    def apply(d):
        for k, v in d.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    apply(env)
    try:
        yield
    finally:
        apply(saved)


@contextlib.contextmanager
def discard_stderr():
    """Silence stderr (file descriptor 2) for the duration of the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def is_op_runnable() -> bool:
    return True


def has_tvm_ops() -> bool:
    return False


def is_cd_run() -> bool:
    return False


def list_gpus() -> list:
    return []


def _real_eig_matrix(n):
    """A well-conditioned n×n matrix with real eigenvalues: Q⁻¹ D Q for a random orthogonal Q."""
    q, _ = np.linalg.qr(np.random.uniform(-1.0, 1.0, (n, n)))
    d = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.linalg.inv(q) @ d @ q


def _sym_real_eig_matrix(n):
    q, _ = np.linalg.qr(np.random.randn(n, n))
    return q.T @ np.diag(np.random.uniform(-10.0, 10.0, n)) @ q


def new_matrix_with_real_eigvals_nd(shape):
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([_real_eig_matrix(shape[-1]) for _ in range(n)]).reshape(shape)


def new_sym_matrix_with_real_eigvals_nd(shape):
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([_sym_real_eig_matrix(shape[-1]) for _ in range(n)]).reshape(shape)


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1e-4, atol=1e-4):
    """Forward outputs agree across imperative and hybridized runs (and NumPy, when given).

    The runner counts calls with `test_grad` left on as gradient tests (out of scope)."""
    outs = []
    for hybridize in (False, True):
        net = net_builder()
        net.initialize()
        if hybridize:
            net.hybridize()
        outs.append(_np(net(*[mx.np.array(_np(d)) for d in data_l])))
    if numpy_func is not None:
        assert_almost_equal(outs[0], numpy_func(*[_np(d) for d in data_l]), rtol=rtol, atol=atol)
    assert_almost_equal(outs[0], outs[1], rtol=rtol, atol=atol)


def _no_gradients(*args, **kwargs):
    raise NotImplementedError("hybridserve is inference only: gradient checks are out of scope")


check_numeric_gradient = check_symbolic_backward = numeric_grad = _no_gradients


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """Equal-probability buckets [(ppf(i/n), ppf((i+1)/n))] for a chi-square test."""
    return ([(ppf(i / nbuckets), ppf((i + 1) / nbuckets)) for i in range(nbuckets)],
            [1.0 / nbuckets] * nbuckets)


def _chi_square_p(generator, buckets, probs, nsamples):
    import scipy.stats as ss
    samples = _np(generator(nsamples)).ravel()
    if isinstance(buckets[0], (list, tuple)):
        obs = [int(((samples >= lo) & (samples < hi)).sum()) for lo, hi in buckets]
    else:
        obs = [int((samples == b).sum()) for b in buckets]
    exp = np.asarray(probs, dtype=np.float64) * nsamples
    exp *= sum(obs) / exp.sum()          # out-of-bucket samples would fail the test anyway
    return ss.chisquare(f_obs=obs, f_exp=exp)[1]


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Repeat a chi-square test; enough of the repeats must not reject the distribution."""
    ps = [_chi_square_p(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    assert sum(p > alpha for p in ps) >= success_rate * nrepeat, f"p-values {ps}"
    return ps


class DummyIter(mx.io.DataIter):
    """An iterator that returns its source's first batch for ever (MXNet's speed-test helper)."""

    def __init__(self, real_iter):
        super().__init__(real_iter.batch_size)
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.the_batch = next(real_iter)

    def next(self):
        return self.the_batch
