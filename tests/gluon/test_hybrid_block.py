"""HybridBlock: hybridized == imperative for every layer, capture/cache semantics, formats,
op hooks, concurrency, errors (GLUON_SEMANTICS §4)."""
import warnings

import numpy as onp
import pytest

import framework as mx
from framework import np, npx
from framework.base import DeferredInitializationError, MXNetError
from framework.gluon import HybridBlock, Parameter, nn
from concurrency import run_in_threads

_DEACT = "Currently the model has been hybridized. Automatically deactivate the hybridization"


def _rand(*shape, seed=0):
    return np.array(onp.random.default_rng(seed).uniform(-1, 1, shape).astype("float32"))


def _seq(*layers, cls=nn.HybridSequential):
    net = cls()
    net.add(*layers)
    return net


LAYERS = {
    "dense": (lambda: nn.Dense(5), (2, 3)),
    "dense_relu_3d": (lambda: nn.Dense(4, activation="relu"), (2, 3, 4)),
    "dense_no_flatten_nobias": (lambda: nn.Dense(4, flatten=False, use_bias=False), (2, 3, 4)),
    "act_relu": (lambda: nn.Activation("relu"), (2, 5)),
    "act_sigmoid": (lambda: nn.Activation("sigmoid"), (2, 5)),
    "act_tanh": (lambda: nn.Activation("tanh"), (2, 5)),
    "act_softrelu": (lambda: nn.Activation("softrelu"), (2, 5)),
    "dropout": (lambda: nn.Dropout(0.5), (4, 6)),
    "dropout_zero": (lambda: nn.Dropout(0.0), (4, 6)),
    "flatten": (lambda: nn.Flatten(), (2, 3, 4)),
    "conv2d": (lambda: nn.Conv2D(4, 3), (2, 3, 8, 8)),
    "conv2d_groups": (lambda: nn.Conv2D(4, 3, strides=2, padding=1, dilation=2, groups=2,
                                         activation="relu"), (1, 4, 9, 9)),
    "conv2d_transpose": (lambda: nn.Conv2DTranspose(3, 3, strides=2), (1, 2, 4, 4)),
    "maxpool2d": (lambda: nn.MaxPool2D(), (2, 3, 8, 8)),
    "maxpool2d_ceil": (lambda: nn.MaxPool2D(3, 2, 1, ceil_mode=True), (1, 2, 7, 7)),
    "avgpool2d": (lambda: nn.AvgPool2D(), (2, 3, 8, 8)),
    "avgpool2d_nopad_count": (lambda: nn.AvgPool2D(3, 1, 1, count_include_pad=False), (1, 2, 5, 5)),
    "global_avgpool": (lambda: nn.GlobalAvgPool2D(), (2, 3, 4, 4)),
    "hybridlambda_fn": (lambda: nn.HybridLambda(lambda x: npx.relu(x) * 2 + 1), (3, 4)),
    "hybridlambda_name": (lambda: nn.HybridLambda("tanh"), (3, 4)),
    "hybridsequential": (lambda: _seq(nn.Conv2D(4, 3, activation="relu"), nn.MaxPool2D(),
                                      nn.Flatten(), nn.Dense(3)), (2, 1, 10, 10)),
    "nested_sequential": (lambda: _seq(_seq(nn.Dense(4), nn.Activation("relu")), nn.Dense(2)),
                          (3, 5)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_hybridized_equals_imperative(name):
    make, shape = LAYERS[name]
    net = make()
    net.initialize()
    x = _rand(*shape)
    want = net(x).asnumpy()
    net.hybridize()
    got1, got2 = net(x).asnumpy(), net(x).asnumpy()
    onp.testing.assert_allclose(got1, want, rtol=1e-6, atol=1e-6)
    onp.testing.assert_array_equal(got1, got2)
    net.hybridize(static_alloc=True, static_shape=True)
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6, atol=1e-6)


def test_lambda_in_sequential_and_slicing():
    net = _seq(nn.Dense(4, in_units=3), nn.Lambda(lambda x: x * 3), nn.Dense(2), cls=nn.Sequential)
    net.initialize()
    x = _rand(2, 3)
    want = net(x).asnumpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net.hybridize()                       # Lambda is a plain Block: no effect on it
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    head = net[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is net[0]
    onp.testing.assert_allclose(net[2](head(x)).asnumpy(), want, rtol=1e-6)
    hs = _seq(nn.Dense(4, in_units=3), nn.Activation("relu"), nn.Dense(2))
    hs.initialize()
    want = hs(x).asnumpy()
    tail = hs[1:]
    tail.hybridize()
    assert isinstance(tail, nn.HybridSequential) and tail[1] is hs[2]
    onp.testing.assert_allclose(tail(hs[0](x)).asnumpy(), want, rtol=1e-6)
    assert hs[-1] is hs[2]


class Split(HybridBlock):
    def forward(self, x):
        return x * 2, x + 1


class Join(HybridBlock):
    def forward(self, a, b):
        return a - b


def test_tuple_passing_between_children_hybridized():
    net = _seq(Split(), Join())
    x = _rand(2, 3)
    want = net(x).asnumpy()
    onp.testing.assert_allclose(want, (x * 2 - (x + 1)).asnumpy())
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), want)
    alone = _seq(Split())
    alone.hybridize()
    a, b = alone(x)
    onp.testing.assert_allclose(b.asnumpy(), (x + 1).asnumpy())


def test_deferred_init_via_infer_shape():
    d = nn.Dense(5)
    d.initialize()
    assert d.weight.shape == (5, -1)
    with pytest.raises(DeferredInitializationError):
        d.weight.data()
    assert issubclass(DeferredInitializationError, MXNetError)
    d.hybridize()
    d(_rand(2, 3, 4))
    assert d.weight.shape == (5, 12) and d.weight.data().shape == (5, 12)
    assert repr(d) == "Dense(12 -> 5, linear)"

    class Custom(HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = Parameter("w", shape=(-1, 3), allow_deferred_init=True)

        def infer_shape(self, x):
            self.w.shape = (x.shape[-1], 3)

        def forward(self, x):
            return np.dot(x, self.w.data())

    c = Custom()
    c.initialize()
    c.hybridize()
    assert c(_rand(2, 7)).shape == (2, 3) and c.w.shape == (7, 3)


def test_deactivation_warnings():
    net = _seq(nn.Dense(3))
    net.initialize()
    net.hybridize()
    net(_rand(2, 4))
    with pytest.warns(UserWarning) as rec:
        net.add(nn.Dense(2))
    assert str(rec[0].message) == _DEACT + " " * 28 + "when adding new children block."
    assert not net._active and net[0]._active and not net._cached_graph
    net[1].initialize()
    net.hybridize()
    net(_rand(2, 4))
    with pytest.warns(UserWarning) as rec:
        net.cast("float64")
    msgs = [str(w.message) for w in rec]
    assert msgs == [_DEACT + " " * 28 + "when cast the block to use another data type."] * 3
    assert net(_rand(2, 4).astype("float64")).dtype == onp.float64


def test_forward_runs_once_and_hooks_only_during_capture():
    class Counting(HybridBlock):
        def __init__(self):
            super().__init__()
            self.calls = 0
            self.d = nn.Dense(2)

        def forward(self, x):
            self.calls += 1
            return self.d(x)

    net = Counting()
    net.initialize()
    seen = []
    net.d.register_forward_hook(lambda b, i, o: seen.append("child"))
    net.register_forward_hook(lambda b, i, o: seen.append("top"))
    net(_rand(1, 3))
    assert net.calls == 1 and seen == ["child", "top"]
    with pytest.warns(UserWarning, match="is being hybridized while still having forward hook"):
        net.hybridize()
    for _ in range(3):
        net(_rand(1, 3))
    assert net.calls == 2                      # captured once, then the cached op
    assert seen == ["child", "top", "child", "top"]


class Add(HybridBlock):
    def forward(self, x, y, z=None):
        if isinstance(y, (list, tuple)):
            y = y[0] + y[1]
        return x + y if z is None else x + y + z


def test_multiple_and_nested_inputs_and_format_mismatch():
    net = Add()
    net.hybridize()
    x, y = _rand(2, 3), _rand(2, 3, seed=1)
    onp.testing.assert_allclose(net(x, y).asnumpy(), (x + y).asnumpy())
    assert [s.name for s in net._cached_graph[0]] == ["data0", "data1"]
    assert net._cached_graph[1].list_inputs() == ["data0", "data1"]
    onp.testing.assert_allclose(net(x, y, None).asnumpy(), (x + y).asnumpy())   # trailing None
    with pytest.raises(ValueError) as e:
        net(x, [y, y])
    assert str(e.value) == ("The argument structure of HybridBlock does not match the cached "
                            "version. Stored format = [0, [0, 0]], input format = [0, 0]")
    nested = Add()
    nested.hybridize()
    out = nested(x, [y, y])
    assert nested._in_format == [0, [0, 0]]
    assert [s.name for s in nested._cached_graph[0]] == ["data0", "data1", "data2"]
    onp.testing.assert_allclose(out.asnumpy(), (x + y + y).asnumpy(), rtol=1e-6)


def test_nested_outputs_regrouped():
    class Tree(HybridBlock):
        def forward(self, x):
            return [x + 1, (x * 2, x * 3)]

    net = Tree()
    net.hybridize()
    a, (b, c) = net(_rand(2))
    assert net._out_format == [0, [0, 0]]
    onp.testing.assert_allclose(c.asnumpy(), (_rand(2) * 3).asnumpy())


def test_unused_input_and_param_warnings():
    class Unused(HybridBlock):
        def __init__(self):
            super().__init__()
            self.d = nn.Dense(2, in_units=3)
            self.e = nn.Dense(2, in_units=3)

        def forward(self, x, y, z):
            return self.d(x) + z.sum()

    net = Unused()
    net.initialize()
    net.hybridize()
    with pytest.warns(UserWarning) as rec:
        net(_rand(2, 3), _rand(2, 3), _rand(2, 2))
    msgs = [str(w.message) for w in rec]
    assert msgs[0] == "The 1-th input to HybridBlock is not used by any computation. Is this intended?"
    assert msgs[1].startswith("Parameter ") and msgs[1].endswith(
        " is not used by any computation. Is this intended?")
    assert sorted(n.split("_")[-1] for n in msgs[1][10:-50].split(", ")) == ["bias", "weight"]


def test_op_hook_monitor_all_names_and_readonly_arrays():
    net = _seq(nn.Dense(4, activation="relu"), nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = _rand(3, 5)
    want = net(x).asnumpy()
    calls = []

    def cb(name, op, arr):
        calls.append((name.split("_", 2)[2], op, arr.shape))
        with pytest.raises(ValueError):
            arr._data[...] = 0                  # read-only view

    net.register_op_hook(cb, monitor_all=True)
    with pytest.warns(UserWarning, match="register_op_hook is experimental"):
        out = net(x)
    onp.testing.assert_allclose(out.asnumpy(), want)
    assert calls == [("data", "FullyConnected", (3, 5)), ("weight", "FullyConnected", (4, 5)),
                     ("bias", "FullyConnected", (4,)), ("output", "FullyConnected", (3, 4)),
                     ("input0", "Activation", (3, 4)), ("output", "Activation", (3, 4)),
                     ("data", "FullyConnected", (3, 4)), ("weight", "FullyConnected", (2, 4)),
                     ("bias", "FullyConnected", (2,)), ("output", "FullyConnected", (3, 2))]
    assert net[0]._callback is not None and net[0].act._callback is None
    calls.clear()
    net.register_op_hook(cb)
    with pytest.warns(UserWarning):
        net(x)
    assert [c[0] for c in calls] == ["output"] * 3


def test_thread_safety_of_hybridized_block():
    net = _seq(nn.Conv2D(4, 3, activation="relu"), nn.BatchNorm(), nn.Flatten(), nn.Dense(6))
    net.initialize()
    net.hybridize(static_alloc=True)
    xs = [_rand(2, 3, 8, 8, seed=i) for i in range(8)]
    serial = [net(x).asnumpy() for x in xs]
    fresh = _seq(nn.Dense(3, activation="relu"), nn.Dense(2))
    fresh.initialize()
    fresh.hybridize()
    results = [None] * 8

    def work(i):
        for _ in range(20):
            results[i] = net(xs[i]).asnumpy()
        fresh(_rand(4, 5))                      # concurrent first calls: capture happens once
    assert not run_in_threads(work, 8)
    for got, want in zip(results, serial):
        onp.testing.assert_array_equal(got, want)
    assert fresh[0].weight.shape == (3, 5)


def test_wrong_shape_after_hybridize_names_node_and_op():
    net = _seq(nn.Dense(4), nn.Dense(2))
    net.initialize()
    net.hybridize()
    net(_rand(3, 5))
    with pytest.raises(MXNetError) as e:
        net(_rand(3, 6))
    msg = str(e.value)
    assert "node 'node_" in msg and "(op FullyConnected)" in msg and "(3, 6)" in msg


def test_errors_before_initialize_and_bad_inputs():
    layer = nn.Dense(3, in_units=2)
    with pytest.raises(RuntimeError, match="Parameter 'weight' has not been initialized. Note that"):
        layer.weight.data()
    with pytest.raises(RuntimeError, match="Parameter 'weight' has not been initialized"):
        layer(_rand(1, 2))
    layer.initialize()
    with pytest.raises(ValueError, match="In HybridBlock, there must be one NDArray in the input."):
        layer(None)
    with pytest.raises(TypeError, match="Block's inputs must be of type `mxnet.numpy.ndarray`"):
        layer(mx.sym.var("data"))
    add = Add()
    add.hybridize()
    with pytest.raises(ValueError) as e:
        add(_rand(2), 3)
    assert str(e.value) == ("When hybridized, the input of HybridBlock input must be (nested) list "
                            "of Symbol or NDArray, but got 3 of type <class 'int'>")


def test_construction_checks_and_flags():
    class Old(HybridBlock):
        def hybrid_forward(self, F, x):
            return x

    with pytest.raises(AssertionError, match="'forward' instead of 'hybrid_forward' interface"):
        Old()
    with pytest.raises(ValueError, match="Children of HybridBlock must also be HybridBlock"):
        nn.HybridSequential().add(nn.Sequential())
    net = _seq(nn.Dense(2))
    net.hybridize(static_alloc=True, forward_bulk_size=3)
    assert net._flags == [("static_alloc", True), ("static_shape", False), ("inline_limit", 2),
                          ("forward_bulk_size", 3)]
    assert net[0]._flags == net._flags and net[0]._active
    net.initialize()
    net(_rand(1, 2))
    assert [k for k, _ in net._flags][:2] == ["data_indices", "param_indices"]
    assert net._flags[0][1] == [0] and net._flags[1][1] == [1, 2]


def test_infer_type_sets_param_dtypes():
    net = _seq(nn.Dense(2, in_units=3))
    net.initialize()
    net.cast("float64")
    net.infer_type(_rand(1, 3).astype("float64"))
    assert {onp.dtype(p.dtype) for p in net.collect_params().values()} == {onp.dtype("float64")}


def test_infer_shape_unknown_error_message():
    class Unknown(HybridBlock):
        def __init__(self):
            super().__init__()
            self.weight = Parameter("weight", shape=(-1, 3), allow_deferred_init=True)

        def forward(self, x):
            return np.dot(x, self.weight.data())

    net = Unknown()
    net.initialize()
    with pytest.raises(RuntimeError) as e:
        net(_rand(2, 4))
    assert str(e.value).endswith("Parameters with unknown shapes are weight ((-1, 3))")


def test_opt_constraint_marks_ops_recorded_inside_it():
    from framework import np as fnp
    from framework.gluon import HybridBlock, nn

    class M(HybridBlock):
        def __init__(self):
            super().__init__()
            self.d = nn.Dense(3)

        def forward(self, x):
            with HybridBlock.OptConstraint.disable_amp():
                y = self.d(x)
            return fnp.exp(y)

    m = M()
    m.initialize()
    m.hybridize()
    m(fnp.ones((2, 4)))
    marks = {n.opname: n.attrs.get("__opt_constraint__") for n in m._cached_graph[1].topo()
             if not n.is_var}
    assert marks == {"FullyConnected": "1", "_npi_exp": None}
    assert HybridBlock.OptConstraint.get_flags() == 0


def test_autograd_is_reachable_and_refuses_clearly():
    from framework.autograd import TrainingNotSupportedError
    assert mx.autograd.is_recording() is False          # reachable right after `import framework`
    x = mx.np.ones((2,))
    with pytest.raises(TrainingNotSupportedError, match="inference only"):
        x.attach_grad()
    with pytest.raises(TrainingNotSupportedError):
        mx.autograd.record()
    with pytest.raises(TrainingNotSupportedError):
        x.backward()
