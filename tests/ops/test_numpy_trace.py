"""Tracing the `framework.np` front-end records the op names and attributes real MXNet 2.x
records for the same Python expressions (compared with the 2.0.0b1 fixture graphs, which were
exported from these expressions by tools/gen_mx2.py)."""
import json
from pathlib import Path

import numpy as onp
import pytest

from framework import np
from framework.ops import get_op
from framework.dispatch import invoke
from framework.symbol.trace import Tracer, tracing

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet-2.0.0b1"


def npx_reshape(a, newshape):   # what npx.reshape records (npx is another module's front-end)
    return invoke("_npx_reshape", [a], {"newshape": newshape, "reverse": False, "order": "C"})


def f_arith(a, b):
    p = np.abs(a) + 0.5
    return (a + b, a - b, a * b, a / b, np.power(p, b), np.maximum(a, b), np.minimum(a, b),
            a + 1.5, a - 2.0, 3.0 - a, a * 0.5, a / 4.0, 2.0 / p, p ** 2.0, 2.0 ** a,
            np.maximum(a, 0.0), np.minimum(a, 0.25),
            (a > b).astype("float32"), (a <= 0.0).astype("float32"),
            np.where(a > 0, a, a * 0.1), np.clip(a, -0.5, 0.5),
            np.exp(a), np.log(p), np.sqrt(p), np.tanh(a), np.abs(a), np.square(a), -a,
            np.negative(a), np.sign(a), np.floor(a * 2), np.ceil(a * 2), np.sin(a), np.cos(a),
            np.log1p(p), np.expm1(a), np.reciprocal(p), np.arctan(a))


def f_shape(a, b):
    parts = np.split(a, 3, axis=1)
    return (np.reshape(a, (2, -1)), npx_reshape(a, (-2, -1)), npx_reshape(a, (-2, -2, -4)),
            npx_reshape(a, (-5, -2, -2)), npx_reshape(a, (-2, -6, 1, 3, -4)),
            npx_reshape(a, (-1, 5)), npx_reshape(np.expand_dims(a, 1), (-2, -3, -2, -2, -2)),
            np.transpose(a, (0, 2, 3, 1)), np.transpose(a), np.swapaxes(a, 1, 3),
            np.moveaxis(a, 1, -1), np.expand_dims(a, 1), np.squeeze(np.expand_dims(a, 0), axis=0),
            np.concatenate([a, b], axis=1), np.concatenate([a, b], axis=-1),
            np.stack([a, b], axis=2), parts[0] - parts[2], a[:, 1:3], a[:, :, ::2], a[1],
            a[:, -1, :, 1:4], a[:, :, 3:0:-2], np.flip(a, axis=3), np.tile(a, (1, 1, 2)),
            np.repeat(a, 2, axis=1), np.broadcast_to(b[:, :1], (2, 3, 4, 5)), np.ravel(a))


def f_matmul(a, b, w):
    return (np.dot(a, w), np.matmul(a, b),
            invoke("batch_dot", [a, a], {"transpose_b": True, "forward_stype": "default"}),
            np.einsum("bij,bjk->bik", a, b), np.tensordot(a, b, axes=([1, 2], [2, 1])),
            np.dot(np.reshape(a, (-1, 4)), w))


def f_reduce(a):
    return (np.mean(a, axis=1), np.mean(a, axis=(2, 3), keepdims=True), np.sum(a, axis=-1),
            np.max(a, axis=2), np.min(a, axis=1, keepdims=True), np.prod(a * 0.5 + 1, axis=3),
            np.std(a, axis=1), np.var(a, axis=(1, 2)), np.mean(a),
            np.argmax(a, axis=1).astype("float32"), np.argmin(a, axis=-1).astype("float32"),
            np.linalg.norm(a, axis=-1), np.cumsum(a, axis=2))


CASES = [("np_arith", f_arith, ["data0", "data1"], ()),
         ("np_shape", f_shape, ["data0", "data1"], ()),
         ("np_matmul", f_matmul, ["data0", "data1", "w"], ()),
         ("np_reduce_softmax", f_reduce, ["data"], ("softmax", "log_softmax", "topk"))]


def _parsed(opname, attrs):
    return dict(get_op(opname).parse_attrs({k: v for k, v in attrs.items()
                                            if not k.startswith("__")}))


@pytest.mark.parametrize("name,fn,inputs,skip", CASES, ids=[c[0] for c in CASES])
def test_trace_matches_mxnet2_export(name, fn, inputs, skip):
    graph = json.loads((FIX / f"{name}-symbol.json").read_text())
    io = onp.load(FIX / f"{name}-io.npz")
    feed = {k: io[k] for k in io.files}
    if "w" in inputs:
        from framework.io.params_file import load_params, strip_prefixes
        feed.update(strip_prefixes(load_params(str(FIX / f"{name}-0000.params"))))
    tracer = Tracer()
    arrays = []
    for n in inputs:
        x = np.array(feed[n])
        tracer.bind_var(x, n)
        arrays.append(x)
    with tracing(tracer):
        outs = fn(*arrays)
    ours = [(n.opname, dict(n.parsed)) for n in tracer.symbol(list(outs)).topo() if not n.is_var]
    theirs = [(nd["op"], _parsed(nd["op"], nd.get("attrs", {}))) for nd in graph["nodes"]
              if nd["op"] != "null" and nd["op"] not in skip]
    assert [o[0] for o in ours] == [t[0] for t in theirs]
    for k, (o, t) in enumerate(zip(ours, theirs)):
        assert o == t, f"node {k}: recorded {o}, MXNet recorded {t}"
    if not skip:   # traced values are the real results
        expected = sorted((k for k in io.files if k.startswith("output")), key=lambda k: int(k[6:]))
        for o, k in zip(outs, expected):
            onp.testing.assert_allclose(onp.asarray(o), io[k], rtol=1e-4, atol=1e-5)


def test_traced_constants_and_scalar_attrs():
    x = np.array(onp.ones((2, 3), onp.float32))
    t = Tracer()
    t.bind_var(x, "data")
    with tracing(t):
        z = np.zeros((2, 3)) + x * 2 - 0.1
    nodes = [n for n in t.symbol([z]).topo() if not n.is_var]
    ops = [n.opname for n in nodes]
    assert ops == ["_npi_zeros", "_npi_multiply_scalar", "_npi_add", "_npi_subtract_scalar"]
    assert nodes[0].attrs == {"ctx": "cpu(0)", "dtype": "float32", "shape": "[2,3]"}
    assert nodes[1].attrs == {"is_int": "1", "scalar": "2"}
    assert nodes[3].attrs == {"is_int": "0", "scalar": "0.10000000000000001"}
