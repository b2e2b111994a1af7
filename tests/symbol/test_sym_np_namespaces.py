"""`mx.sym.np` / `mx.sym.npx` compose graphs; npx functions take inputs by name."""
import numpy as onp
import pytest

import framework as mx


def test_sym_np_composes_and_runs():
    a, b = mx.sym.var("a").as_np_ndarray(), mx.sym.var("b").as_np_ndarray()
    out = mx.sym.np.dot(a, mx.sym.np.stack([b, b], axis=1))
    assert out.list_arguments() == ["a", "b"]
    xa, xb = onp.arange(6.0).reshape(2, 3), onp.arange(3.0)
    ex = out._bind(args={"a": mx.np.array(xa), "b": mx.np.array(xb)})
    onp.testing.assert_allclose(ex.forward()[0].asnumpy(), xa @ onp.stack([xb, xb], axis=1))
    assert issubclass(mx.sym.np._Symbol, mx.sym.Symbol)


def test_sym_npx_named_inputs_keep_the_op_input_order():
    v = {n: mx.sym.var(n).as_np_ndarray() for n in ("x", "off", "msk", "w", "b")}
    out = mx.sym.npx.modulated_deformable_convolution(
        name="dcn", bias=v["b"], weight=v["w"], mask=v["msk"], offset=v["off"], data=v["x"],
        kernel=(3, 3), pad=(1, 1), num_filter=4, num_deformable_group=2)
    assert out.list_arguments() == ["x", "off", "msk", "w", "b"]
    args, outs, _ = out.infer_shape(x=(1, 4, 5, 5), off=(1, 36, 5, 5), msk=(1, 18, 5, 5))
    assert args[3] == (4, 4, 3, 3) and outs == [(1, 4, 5, 5)]


def test_npx_named_inputs_imperative_and_errors():
    x = mx.np.ones((1, 2, 4, 4))
    zero_offsets = mx.np.zeros((1, 18, 4, 4))
    w = mx.np.ones((3, 2, 3, 3))
    dcn = mx.npx.deformable_convolution(data=x, offset=zero_offsets, weight=w, kernel=(3, 3),
                                        pad=(1, 1), num_filter=3, no_bias=True)
    conv = mx.npx.convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=3, no_bias=True)
    onp.testing.assert_allclose(dcn.asnumpy(), conv.asnumpy())   # zero offsets: a convolution
    with pytest.raises(TypeError, match="no input named"):
        mx.npx.deformable_convolution(data=x, offsets=zero_offsets, weight=w, kernel=(3, 3),
                                      num_filter=3, no_bias=True)


def test_modulated_with_unit_mask_equals_v1_away_from_the_edges():
    rs = onp.random.RandomState(0)
    img = rs.randn(1, 2, 6, 6).astype("float32")
    img[..., -1, :] = img[..., :, -1] = 0    # where v1 replicates the edge and v2 fades to 0
    x = mx.np.array(img)
    off = mx.np.array((rs.rand(1, 18, 4, 4) * 0.9).astype("float32"))
    w = mx.np.array(rs.randn(2, 2, 3, 3).astype("float32"))
    kw = dict(kernel=(3, 3), num_filter=2, no_bias=True)
    v1 = mx.npx.deformable_convolution(x, off, w, **kw).asnumpy()
    v2 = mx.npx.modulated_deformable_convolution(x, off, mx.np.ones((1, 9, 4, 4)), w, **kw)
    onp.testing.assert_allclose(v1, v2.asnumpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(mx.MXNetError, match="offset|shape"):
        mx.npx.deformable_convolution(x, mx.np.zeros((1, 18, 6, 6)), w, **kw)
