"""Shape ops: reshape codes (1.x and npx), transpose, concat/stack/split, tile/repeat/flip,
broadcasting, expand/squeeze."""
import numpy as np
import pytest

from framework.base import MXNetError
from framework.ops.tensor.reshape import legacy_reshape_shape, npx_reshape_shape
from _helpers import close, rnd, run_op

X = rnd(2, 3, 4, 5, seed=11)


@pytest.mark.parametrize("spec,reverse,want", [
    ((0, -1), False, (2, 60)), ((0, 0, -3), False, (2, 3, 20)),
    ((-4, 1, 2, -2), False, (1, 2, 3, 4, 5)), ((0, -4, -1, 3, 0, 0), False, (2, 1, 3, 4, 5)),
    ((-3, -3), False, (6, 20)), ((-1, 0), True, (24, 5)), ((-2,), False, (2, 3, 4, 5)),
    ((0, -3, -2), False, (2, 12, 5)), ((6, -1, 2), False, (6, 10, 2)), ((-1,), False, (120,)),
])
def test_legacy_reshape_codes(spec, reverse, want):
    assert legacy_reshape_shape(X.shape, spec, reverse) == want
    out = run_op("Reshape", X, shape=spec, reverse=reverse)
    assert out.shape == want
    close(out.reshape(-1), X.reshape(-1))


@pytest.mark.parametrize("spec,src,want", [
    ((-2, -1), (2, 3, 4, 5), (2, 60)), ((-2, -2, -4), (2, 3, 4, 5), (2, 3, 4, 5)),
    ((-5, -2, -2), (2, 3, 4, 5), (6, 4, 5)), ((-2, -6, 1, 3, -4), (2, 3, 4, 5), (2, 1, 3, 4, 5)),
    ((-1, 5), (2, 3, 4, 5), (24, 5)), ((-2, -3, -2, -2, -2), (2, 1, 3, 4, 5), (2, 3, 4, 5)),
    ((-3, -4), (1, 3, 4), (3, 4)), ((-6, -1, 2, -2), (4, 5), (2, 2, 5)), ((2, -1), (2, 3, 4), (2, 12)),
])
def test_npx_reshape_codes(spec, src, want):
    assert npx_reshape_shape(src, spec) == want
    x = np.arange(int(np.prod(src)), dtype=np.float32).reshape(src)
    out = run_op("_npx_reshape", x, newshape=spec)
    assert out.shape == want


def test_reshape_errors_and_views():
    with pytest.raises(MXNetError):
        run_op("_npx_reshape", X, newshape=(7, -1))
    with pytest.raises(MXNetError):
        run_op("_npx_reshape", X, newshape=(-3, -4))     # -3 needs a size-1 dim
    out = run_op("_npx_reshape", X, newshape=(-1,))
    assert np.shares_memory(out, X)


def test_flatten_reshape_like():
    assert run_op("Flatten", X).shape == (2, 60)
    y = np.zeros((5, 24), np.float32)
    assert run_op("reshape_like", X, y).shape == (5, 24)
    out = run_op("reshape_like", X, np.zeros((6, 4), np.float32), lhs_begin=0, lhs_end=2,
                 rhs_begin=0, rhs_end=1)
    assert out.shape == (6, 4, 5)


def test_transpose_family():
    close(run_op("_npi_transpose", X, axes=(0, 2, 3, 1)), X.transpose(0, 2, 3, 1))
    close(run_op("transpose", X), X.T)
    close(run_op("transpose", X, axes="()"), X.T)
    close(run_op("SwapAxis", X, dim1=1, dim2=3), X.swapaxes(1, 3))
    close(run_op("_npi_moveaxis", X, source=(1,), destination=(-1,)), np.moveaxis(X, 1, -1))
    close(run_op("_npi_moveaxis", X, source=(0, 1), destination=(3, 2)),
          np.moveaxis(X, (0, 1), (3, 2)))


def test_expand_squeeze():
    y = rnd(2, 1, 5, 1)
    assert run_op("expand_dims", y, axis=1).shape == (2, 1, 1, 5, 1)
    assert run_op("expand_dims", y, axis=-1).shape == (2, 1, 5, 1, 1)
    assert run_op("squeeze", y, axis=1).shape == (2, 5, 1)
    assert run_op("squeeze", y).shape == (2, 5)
    assert run_op("_npi_squeeze", y, axis=(1, 3)).shape == (2, 5)
    with pytest.raises(MXNetError):
        run_op("squeeze", y, axis=0)
    ones = np.ones((1, 1), np.float32)
    assert run_op("squeeze", ones).shape == (1,)          # 1.x
    assert run_op("_npi_squeeze", ones).shape == ()


def test_concat_stack():
    y = rnd(2, 3, 4, 5, seed=12)
    close(run_op("Concat", X, y, num_args=2, dim=1), np.concatenate([X, y], 1))
    close(run_op("Concat", X, y, X, num_args=3, dim=-1), np.concatenate([X, y, X], -1))
    close(run_op("stack", X, y, num_args=2, axis=2), np.stack([X, y], 2))
    close(run_op("_npi_concatenate", X, y, num_args=2, axis=None),
          np.concatenate([X.ravel(), y.ravel()]))
    with pytest.raises(MXNetError):
        run_op("Concat", X, rnd(2, 4, 4, 5), num_args=2, dim=2)


def test_tile_repeat_flip():
    close(run_op("tile", X, reps=(1, 2, 1, 1)), np.tile(X, (1, 2, 1, 1)))
    close(run_op("tile", X, reps=(2,)), np.tile(X, 2))
    close(run_op("repeat", X, repeats=2, axis=3), np.repeat(X, 2, 3))
    close(run_op("repeat", X, repeats=2), np.repeat(X, 2))
    close(run_op("_npi_repeats", X, repeats=(2,), axis=0), np.repeat(X, 2, 0))
    close(run_op("reverse", X, axis=2), X[:, :, ::-1])
    close(run_op("_npi_flip", X, axis=(1, 3)), X[:, ::-1, :, ::-1])


def test_broadcasting_ops():
    b = rnd(1, 3, 1, 5)
    close(run_op("broadcast_to", b, shape=(2, 3, 4, 5)), np.broadcast_to(b, X.shape))
    close(run_op("broadcast_to", b, shape="(2, 0, 3, 0)"), np.broadcast_to(b, (2, 3, 3, 5)))
    close(run_op("broadcast_like", b, X), np.broadcast_to(b, X.shape))
    close(run_op("broadcast_axis", b, axis=(0, 2), size=(2, 4)), np.broadcast_to(b, X.shape))
    close(run_op("broadcast_like", b, X, lhs_axes=(0,), rhs_axes=(0,)),
          np.broadcast_to(b, (2, 3, 1, 5)))


def test_split_ops():
    outs = run_op("SliceChannel", X, num_outputs=3, axis=1)
    assert len(outs) == 3 and outs[0].shape == (2, 1, 4, 5)
    outs = run_op("SliceChannel", X, num_outputs=3, axis=1, squeeze_axis=True)
    assert outs[2].shape == (2, 4, 5)
    close(outs[2], X[:, 2])
    outs = run_op("_split_v2", X, indices=(0, 1, 4), axis=2)
    assert [o.shape[2] for o in outs] == [1, 3, 0]
    outs = run_op("_split_v2", X, indices=(), sections=3, axis=1)
    close(outs[1], X[:, 1:2])
    outs = run_op("_split_v2", X, indices=(2,), axis=3)   # without the leading 0
    assert [o.shape[3] for o in outs] == [2, 3]
