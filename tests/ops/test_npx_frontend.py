"""framework.npx (MXNet's numpy_extension): results, the nodes a traced call records (op names and
attrs as real MXNet 2.0.0b1 exports them), NumPy-semantics switches, save/load, devices."""
import json

import numpy as onp
import pytest

import framework as mx
from framework import np, npx
from framework.ndarray import ndarray
from framework.symbol.trace import Tracer, tracing


def _arr(rng, *shape):
    return np.array(rng.standard_normal(shape).astype(onp.float32))


def trace(fn, *arrays):
    tr = Tracer()
    for i, x in enumerate(arrays):
        tr.bind_var(x, f"data{i}")
    with tracing(tr):
        out = fn(*arrays)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    doc = json.loads(tr.symbol(outs).tojson())
    return [(n["op"], {k: v for k, v in n.get("attrs", {}).items() if not k.startswith("__")})
            for n in doc["nodes"] if n["op"] != "null"]


# What MXNet 2.0.0b1 records for the same calls (hybridize + export of a HybridBlock).
RECORDED = [
    ("relu", lambda x: npx.relu(x), [(2, 3)], ("_npx_relu", {})),
    ("sigmoid", lambda x: npx.sigmoid(x), [(2, 3)], ("_npx_sigmoid", {})),
    ("activation", lambda x: npx.activation(x, act_type="tanh"), [(2, 3)],
     ("Activation", {"act_type": "tanh"})),
    ("leaky_relu", lambda x: npx.leaky_relu(x), [(2, 3)],
     ("LeakyReLU", {"act_type": "leaky", "lower_bound": "0.125", "slope": "0.25",
                    "upper_bound": "0.334"})),
    ("softmax", lambda x: npx.softmax(x), [(2, 3)],
     ("softmax", {"axis": "-1", "dtype": "None", "temperature": "None", "use_length": "0"})),
    ("softmax_t", lambda x: npx.softmax(x, temperature=2.0), [(2, 3)],
     ("softmax", {"axis": "-1", "dtype": "None", "temperature": "2", "use_length": "0"})),
    ("log_softmax", lambda x: npx.log_softmax(x, axis=0), [(2, 3)],
     ("log_softmax", {"axis": "0", "dtype": "None", "temperature": "None",
                      "use_length": "0"})),
    ("fc", lambda x, w: npx.fully_connected(x, w, num_hidden=4, no_bias=True),
     [(2, 3), (4, 3)], ("FullyConnected", {"flatten": "1", "no_bias": "1", "num_hidden": "4"})),
    ("conv", lambda x, w, b: npx.convolution(x, w, b, kernel=(3, 3), num_filter=4),
     [(1, 2, 5, 5), (4, 2, 3, 3), (4,)],
     ("Convolution", {"cudnn_off": "0", "cudnn_tune": "None", "dilate": "[1,1]",
                      "kernel": "[3,3]", "layout": "NCHW", "no_bias": "0", "num_filter": "4",
                      "num_group": "1", "pad": "[0,0]", "stride": "[1,1]",
                      "workspace": "1024"})),
    ("deconv", lambda x, w, b: npx.deconvolution(x, w, b, kernel=(3, 3), num_filter=4),
     [(1, 2, 5, 5), (2, 4, 3, 3), (4,)],
     ("Deconvolution", {"adj": "[0,0]", "cudnn_off": "0", "cudnn_tune": "None",
                        "dilate": "[1,1]", "kernel": "[3,3]", "layout": "NCHW", "no_bias": "0",
                        "num_filter": "4", "num_group": "1", "pad": "[0,0]", "stride": "[1,1]",
                        "target_shape": "None", "workspace": "1024"})),
    ("pooling", lambda x: npx.pooling(x, kernel=(2, 2)), [(1, 2, 5, 5)],
     ("Pooling", {"count_include_pad": "None", "cudnn_off": "0", "global_pool": "0",
                  "kernel": "[2,2]", "layout": "None", "output_size": "None",
                  "p_value": "None", "pad": "[0,0]", "pool_type": "max",
                  "pooling_convention": "valid", "stride": "[1,1]"})),
    ("pool_global", lambda x: npx.pooling(x, kernel=(1, 1), global_pool=True, pool_type="avg"),
     [(1, 2, 4, 4)],
     ("Pooling", {"count_include_pad": "None", "cudnn_off": "0", "global_pool": "1",
                  "kernel": "[1,1]", "layout": "None", "output_size": "None",
                  "p_value": "None", "pad": "[0,0]", "pool_type": "avg",
                  "pooling_convention": "valid", "stride": "[1,1]"})),
    ("bn", lambda x, g, b, m, v: npx.batch_norm(x, g, b, m, v),
     [(1, 2, 5, 5), (2,), (2,), (2,), (2,)],
     ("BatchNorm", {"axis": "1", "cudnn_off": "0", "eps": "0.001", "fix_gamma": "1",
                    "max_calib_range": "None", "min_calib_range": "None", "momentum": "0.9",
                    "output_mean_var": "0", "use_global_stats": "0"})),
    ("ln", lambda x, g, b: npx.layer_norm(x, g, b), [(2, 3), (3,), (3,)],
     ("LayerNorm", {"axis": "-1", "eps": "1e-05", "output_mean_var": "0"})),
    ("gn", lambda x, g, b: npx.group_norm(x, g, b), [(2, 4, 3), (4,), (4,)],
     ("GroupNorm", {"eps": "0.001", "num_groups": "1", "output_mean_var": "0"})),
    ("dropout", lambda x: npx.dropout(x), [(2, 3)],
     ("Dropout", {"axes": "[]", "cudnn_off": "0", "mode": "training", "p": "0.5"})),
    ("embedding", lambda x, w: npx.embedding(x, w, input_dim=4, output_dim=3), [(2,), (4, 3)],
     ("Embedding", {"dtype": "float32", "input_dim": "4", "output_dim": "3",
                    "sparse_grad": "0"})),
    ("rnn", lambda x, p, s: npx.rnn(x, p, s, mode="gru", state_size=2, num_layers=1),
     [(3, 2, 4), (48,), (1, 2, 2)],
     ("RNN", {"bidirectional": "0", "lstm_state_clip_max": "None",
              "lstm_state_clip_min": "None", "lstm_state_clip_nan": "0", "mode": "gru",
              "num_layers": "1", "p": "0", "projection_size": "None", "state_outputs": "0",
              "state_size": "2", "use_sequence_length": "0"})),
    ("gelu", lambda x: npx.leaky_relu(x, act_type="gelu"), [(2, 3)],
     ("LeakyReLU", {"act_type": "gelu", "lower_bound": "0.125", "slope": "0.25",
                    "upper_bound": "0.334"})),
    ("softsign", lambda x: npx.softsign(x), [(2, 3)], ("softsign", {})),
]


@pytest.mark.parametrize("case", RECORDED, ids=[c[0] for c in RECORDED])
def test_recorded_node(case):
    _, fn, shapes, want = case
    rng = onp.random.default_rng(0)
    arrays = [np.array(rng.uniform(0.1, 1.0, s).astype(onp.float32)) for s in shapes]
    nodes = trace(fn, *arrays)
    assert nodes == [want]


def test_results_match_ops():
    rng = onp.random.default_rng(1)
    x = _arr(rng, 2, 3, 6, 6)
    w = _arr(rng, 4, 3, 3, 3)
    b = _arr(rng, 4)
    y = npx.convolution(x, w, b, kernel=(3, 3), pad=(1, 1), num_filter=4)
    assert isinstance(y, ndarray) and y.shape == (2, 4, 6, 6)
    p = npx.pooling(y, kernel=(2, 2), stride=(2, 2), pool_type="max")
    assert p.shape == (2, 4, 3, 3)
    onp.testing.assert_allclose(p.asnumpy(), y.asnumpy().reshape(2, 4, 3, 2, 3, 2).max((3, 5)))
    r = npx.relu(np.array([-1.0, 2.0]))
    assert r.tolist() == [0.0, 2.0]
    s = npx.softmax(np.array([[1.0, 1.0]]))
    onp.testing.assert_allclose(s.asnumpy(), [[0.5, 0.5]])
    lens = np.array(onp.array([1, 2], onp.int32))
    sl = npx.softmax(np.array(onp.ones((2, 3), onp.float32)), length=lens, use_length=True)
    onp.testing.assert_allclose(sl.asnumpy(), [[1, 0, 0], [0.5, 0.5, 0]], rtol=1e-6)
    m = npx.masked_softmax(np.array(onp.ones((1, 3), onp.float32)),
                           np.array(onp.array([[True, False, True]])))
    onp.testing.assert_allclose(m.asnumpy(), [[0.5, 0, 0.5]], rtol=1e-6)
    bn = npx.batch_norm(x, np.ones((3,)), np.zeros((3,)), np.zeros((3,)), np.ones((3,)),
                        eps=0.0, fix_gamma=False)
    onp.testing.assert_allclose(bn.asnumpy(), x.asnumpy(), rtol=1e-6)
    outs = npx.batch_norm(x, np.ones((3,)), np.zeros((3,)), np.zeros((3,)), np.ones((3,)),
                          output_mean_var=True)
    assert isinstance(outs, list) and len(outs) == 3
    ln = npx.layer_norm(x, np.ones((6,)), np.zeros((6,)))
    assert ln.shape == x.shape
    d = npx.dropout(x, p=0.5)
    onp.testing.assert_array_equal(d.asnumpy(), x.asnumpy())
    e = npx.embedding(np.array([0.0, 2.0]), np.array(onp.eye(3, dtype=onp.float32)),
                      input_dim=3, output_dim=3)
    onp.testing.assert_array_equal(e.asnumpy(), onp.eye(3)[[0, 2]])
    lr = npx.leaky_relu(np.array([-1.0, 1.0]), np.array([0.5]), act_type="prelu")
    assert isinstance(lr, ndarray) and lr.tolist() == [-0.5, 1.0]
    fc = npx.fully_connected(x, _arr(rng, 5, 108), _arr(rng, 5), num_hidden=5, no_bias=False)
    assert fc.shape == (2, 5)
    dc = npx.deconvolution(y, _arr(rng, 4, 2, 2, 2), kernel=(2, 2), stride=(2, 2),
                           num_filter=2, no_bias=True)
    assert dc.shape == (2, 2, 12, 12)


def test_rnn_frontend():
    rng = onp.random.default_rng(2)
    T, N, I, H = 4, 2, 3, 5
    size = (I + H + 2) * 4 * H
    x, params = _arr(rng, T, N, I), _arr(rng, size)
    h0, c0 = np.zeros((1, N, H)), np.zeros((1, N, H))
    out, hy, cy = npx.rnn(x, params, h0, c0, mode="lstm", state_size=H, num_layers=1,
                          state_outputs=True)
    assert out.shape == (T, N, H) and hy.shape == (1, N, H) and cy.shape == (1, N, H)
    onp.testing.assert_allclose(out.asnumpy()[-1], hy.asnumpy()[0])
    with pytest.raises(ValueError):
        npx.rnn(x, params, h0, mode="lstm", state_size=H, num_layers=1)


def test_other_families_wrappers():
    from framework.ops.registry import has_op
    x = np.array(onp.arange(6, dtype=onp.float32).reshape(2, 3))
    if has_op("pick"):
        assert npx.pick(x, np.array([0.0, 2.0])).tolist() == [0.0, 5.0]
    if has_op("topk"):
        assert npx.topk(x, k=1).shape == (2, 1)
    if has_op("_npx_reshape"):
        assert npx.reshape(x, (-1,)).shape == (6,)
    if has_op("one_hot"):
        assert npx.one_hot(np.array([1.0]), depth=3).tolist() == [[0.0, 1.0, 0.0]]
    if has_op("batch_dot"):
        a = np.array(onp.ones((2, 3, 4), onp.float32))
        assert npx.batch_dot(a, a, transpose_b=True).shape == (2, 3, 3)
    if has_op("_contrib_arange_like"):
        assert npx.arange_like(x).shape == (2, 3)
    if has_op("Flatten"):
        assert npx.batch_flatten(np.array(onp.ones((2, 3, 4)))).shape == (2, 12)


def test_getattr_fallback():
    y = npx.depth_to_space(np.array(onp.arange(24, dtype=onp.float32).reshape(1, 4, 2, 3)),
                           block_size=2)
    assert y.shape == (1, 1, 4, 6)
    with pytest.raises(AttributeError):
        npx.definitely_not_an_op


def test_np_semantics_switches():
    assert npx.is_np_array() and npx.is_np_shape() and not npx.is_np_default_dtype()
    try:
        npx.reset_np()
        assert not npx.is_np_array() and not npx.is_np_shape()
        npx.set_np(dtype=True)
        assert npx.is_np_default_dtype()
        with pytest.raises(ValueError):
            npx.set_np(shape=False, array=True)
    finally:
        npx.set_np()
    assert npx.is_np_array() and npx.is_np_shape() and not npx.is_np_default_dtype()

    @npx.use_np
    class Net:
        pass
    assert Net.__name__ == "Net"
    assert npx.use_np(len) is len


def test_devices_and_waitall():
    assert npx.cpu() == mx.cpu() and npx.current_device() == mx.cpu(0)
    assert npx.num_gpus() == 0 and str(npx.gpu(1)) == "gpu(1)"
    assert npx.waitall() is None


def test_save_load(tmp_path):
    a = np.array(onp.arange(4, dtype=onp.float32))
    b = np.array(onp.ones((2, 2)), dtype="float64")
    npx.save(str(tmp_path / "a.npy"), a)
    r = npx.load(str(tmp_path / "a.npy"))
    assert isinstance(r, ndarray) and r.tolist() == [0, 1, 2, 3]
    assert onp.load(tmp_path / "a.npy").tolist() == [0, 1, 2, 3]
    npx.savez(str(tmp_path / "b.npz"), a, x=b)
    d = npx.load(str(tmp_path / "b.npz"))
    assert sorted(d) == ["arr_0", "x"] and d["x"].dtype == onp.float64
    onp.testing.assert_array_equal(d["arr_0"].asnumpy(), a.asnumpy())
    with pytest.raises(ValueError):
        npx.save(str(tmp_path / "c.npy"), [1, 2])
    with pytest.raises(TypeError):
        npx.savez(str(tmp_path / "c.npz"), x=[1, 2])
