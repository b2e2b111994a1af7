"""BatchNorm, LayerNorm, GroupNorm, InstanceNorm, L2Normalization, LRN (inference)."""
import numpy as np
import pytest

from nn_testutil import ATOL, RTOL, check_fixture, rand, run_op


@pytest.fixture
def rng():
    return np.random.default_rng(21)


@pytest.mark.parametrize("axis", [1, -1, 2])
@pytest.mark.parametrize("fix_gamma", [False, True])
def test_batch_norm(rng, axis, fix_gamma):
    x = rand(rng, 2, 4, 5, 3)
    C = x.shape[axis]
    g, b = rand(rng, C, lo=0.5, hi=1.5), rand(rng, C)
    m, v = rand(rng, C) * 0.1, rand(rng, C, lo=0.5, hi=1.5)
    y, mean, inv = run_op("BatchNorm", {"axis": axis, "fix_gamma": fix_gamma, "eps": 1e-3},
                          x, g, b, m, v)
    shp = [1] * 4
    shp[axis] = C
    gg = np.ones(C) if fix_gamma else g
    ref = (x - m.reshape(shp)) / np.sqrt(v.reshape(shp) + 1e-3) * gg.reshape(shp) + b.reshape(shp)
    np.testing.assert_allclose(y, ref, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(mean, m)                       # hidden outputs: as MXNet's CPU
    np.testing.assert_allclose(inv, 1 / np.sqrt(v + 1e-3), rtol=1e-6)   # kernel: invstd


def test_batch_norm_structure():
    from framework.ops.registry import get_op
    op = get_op("BatchNorm")
    a = op.parse_attrs({})
    assert op.aux == (3, 4) and op.n_outputs(a) == 3 and op.n_visible(a) == 1
    assert op.input_names(a) == ["data", "gamma", "beta", "moving_mean", "moving_var"]
    assert [op.output_name(a, i) for i in range(3)] == ["output", "mean", "var"]
    assert a.eps == 1e-3 and a.fix_gamma is True
    assert op.n_visible(op.parse_attrs({"output_mean_var": "True"})) == 3
    assert op.infer_param_shapes(a, [(2, 4, 5, 5), None, None, None, None]) == \
        [(2, 4, 5, 5), (4,), (4,), (4,), (4,)]


def test_batch_norm_out_buffer(rng):
    from framework.ops.registry import get_op
    op = get_op("BatchNorm")
    x = rand(rng, 2, 3, 4)
    p = [np.ones(3, np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32),
         np.ones(3, np.float32)]
    out = np.empty_like(x)
    res = op.kernel(op.parse_attrs({"eps": 0.0}), x, *p, out=out)
    assert res[0] is out
    np.testing.assert_allclose(out, x, rtol=1e-6)


@pytest.mark.parametrize("axis", [-1, 1, 0])
def test_layer_norm(rng, axis):
    x = rand(rng, 3, 4, 5)
    C = x.shape[axis]
    g, b = rand(rng, C), rand(rng, C)
    y, mean, std = run_op("LayerNorm", {"axis": axis, "eps": 1e-3}, x, g, b)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=axis, keepdims=True)
    sd = np.sqrt(xd.var(axis=axis, keepdims=True) + 1e-3)
    shp = [1] * 3
    shp[axis] = C
    np.testing.assert_allclose(y, (xd - mu) / sd * g.reshape(shp) + b.reshape(shp),
                               rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(mean, mu, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(std, sd, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("per_group", [False, True])
def test_group_norm(rng, per_group):
    x = rand(rng, 2, 6, 3, 4)
    G = 3
    n = G if per_group else 6                 # MXNet 1.x: gamma per group; 2.x: per channel
    g, b = rand(rng, n), rand(rng, n)
    y, mean, std = run_op("GroupNorm", {"num_groups": G, "eps": 1e-5}, x, g, b,
                          check=not per_group)
    xg = x.astype(np.float64).reshape(2, G, -1)
    mu = xg.mean(axis=2, keepdims=True)
    sd = np.sqrt(xg.var(axis=2, keepdims=True) + 1e-5)
    z = ((xg - mu) / sd)
    if per_group:
        ref = (z * g.reshape(1, G, 1) + b.reshape(1, G, 1)).reshape(x.shape)
    else:
        ref = z.reshape(x.shape) * g.reshape(1, 6, 1, 1) + b.reshape(1, 6, 1, 1)
    np.testing.assert_allclose(y, ref, rtol=RTOL, atol=ATOL)
    assert mean.shape == (2, G) and std.shape == (2, G)


def test_instance_norm(rng):
    x = rand(rng, 2, 3, 4, 5)
    g, b = rand(rng, 3), rand(rng, 3)
    y, mean, var = run_op("InstanceNorm", {"eps": 1e-5}, x, g, b)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=(2, 3), keepdims=True)
    vr = xd.var(axis=(2, 3), keepdims=True)
    ref = (xd - mu) / np.sqrt(vr + 1e-5) * g.reshape(1, 3, 1, 1) + b.reshape(1, 3, 1, 1)
    np.testing.assert_allclose(y, ref, rtol=RTOL, atol=ATOL)
    assert mean.shape == (2, 3)


@pytest.mark.parametrize("mode,axes", [("instance", (1, 2, 3)), ("channel", (1,)),
                                       ("spatial", (2, 3))])
def test_l2_normalization(rng, mode, axes):
    x = rand(rng, 2, 3, 4, 5)
    y, norm = run_op("L2Normalization", {"mode": mode, "eps": 1e-6}, x)
    nrm = np.sqrt((x.astype(np.float64) ** 2).sum(axis=axes, keepdims=True) + 1e-6)
    np.testing.assert_allclose(y, x / nrm, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("nsize", [3, 5, 4, 1])
def test_lrn(rng, nsize):
    x = rand(rng, 2, 7, 3, 4)
    alpha, beta, knorm = 1e-3, 0.75, 2.0
    y, _ = run_op("LRN", {"alpha": alpha, "beta": beta, "knorm": knorm, "nsize": nsize}, x)
    xd = x.astype(np.float64)
    ref = np.empty_like(xd)
    lo = hi = (nsize - 1) // 2      # even nsize: nsize-1 channels (MXNet's oneDNN LRN)
    for c in range(7):
        s = (xd[:, max(c - lo, 0):min(c + hi, 6) + 1] ** 2).sum(axis=1)
        ref[:, c] = xd[:, c] * (knorm + alpha / nsize * s) ** (-beta)
    np.testing.assert_allclose(y, ref, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("version,name", [("mxnet-1.9.1", "batchnorm_variants"),
                                          ("mxnet-1.9.1", "norm_layers"),
                                          ("mxnet-2.0.0b1", "nn_layers_2")])
def test_fixture(version, name):
    check_fixture(version, name)
