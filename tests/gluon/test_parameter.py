"""Parameter and Constant (GLUON_SEMANTICS §2-3)."""
import numpy as onp
import pytest

import framework as mx
from framework import np
from framework.base import DeferredInitializationError
from framework.gluon import Constant, Parameter


def test_repr_shape_and_dtype_as_given():
    assert repr(Parameter("w", shape=(2, -1))) == \
        "Parameter (shape=(2, -1), dtype=<class 'numpy.float32'>)"
    assert repr(Parameter("w", shape=3, dtype="float16")) == "Parameter (shape=(3,), dtype=float16)"
    assert Parameter("w", shape=(5, 0)).shape == (5, -1)
    assert Parameter("w").shape is None


def test_shape_setter_fills_unknown_dims_only():
    p = Parameter("weight", shape=(5, -1))
    p.shape = (5, 4)
    assert p.shape == (5, 4)
    with pytest.raises(AssertionError) as e:
        p.shape = (5, 3)
    assert str(e.value) == "Expected shape (5, 3) is incompatible with given shape (5, 4) for Parameter weight."
    with pytest.raises(AssertionError):
        p.shape = (5, 4, 1)


def test_grad_req_rules():
    p = Parameter("w", shape=(2,))
    with pytest.raises(AssertionError, match="grad_req must be one of 'write', 'add', or 'null', but got 'x'"):
        p.grad_req = "x"
    p.initialize()
    assert p.grad().shape == (2,)
    p.grad_req = "null"
    with pytest.raises(RuntimeError, match="Cannot get gradient array for Parameter 'w' because grad_req='null'"):
        p.grad()
    q = Parameter("q", shape=(2,), differentiable=False)
    q.grad_req = "write"
    assert q.grad_req == "null"


def test_initialize_flow_and_messages():
    p = Parameter("w", shape=(2, -1))
    with pytest.raises(ValueError, match=r"Cannot initialize Parameter 'w' because it has invalid shape: \(2, -1\)\."):
        p.initialize()
    d = Parameter("d", shape=(2, -1), allow_deferred_init=True)
    d.initialize()
    assert d.list_device() == [mx.cpu()]
    with pytest.raises(DeferredInitializationError, match="Parameter 'd' has not been initialized yet"):
        d.data()
    d.set_data(np.ones((2, 3)))                  # stashed until the deferred init finishes
    d._finish_deferred_init()
    assert float(d.data().sum()) == 6.0
    with pytest.warns(UserWarning, match="Parameter 'd' is already initialized, ignoring."):
        d.initialize()
    d.initialize(mx.init.Zero(), force_reinit=True)
    assert float(abs(d.data()).sum()) == 0.0
    u = Parameter("u", shape=(3,))
    with pytest.raises(RuntimeError, match="Parameter 'u' has not been initialized$"):
        u.list_device()
    with pytest.raises(AssertionError, match="Parameter 'u' has not been initialized"):
        u.set_data(np.ones((3,)))
    with pytest.raises(ValueError, match="Cannot reset device for Parameter 'u'"):
        u.reset_device(mx.cpu())


def test_default_init_bypasses_name_dispatch():
    mx.random.seed(1)
    b = Parameter("bias", shape=(50,))
    b.initialize()                                 # uniform, not zeros (MXNet 2)
    v = b.data().asnumpy()
    assert onp.abs(v).max() <= 0.07 and onp.abs(v).max() > 0
    z = Parameter("w", shape=(4,), init="zeros")
    z.initialize(default_init=mx.init.One())
    assert float(z.data().sum()) == 0.0
    o = Parameter("w", shape=(4,))
    o.initialize(init=mx.init.One())
    assert float(o.data().sum()) == 4.0


def test_cast_and_load_init():
    p = Parameter("w", shape=(2, 2))
    p.initialize()
    p.cast("float16")
    assert p.data().dtype == onp.float16 and p.grad().dtype == onp.float16
    with pytest.raises(AssertionError, match="dtype incompatible expected float16 vs saved float32"):
        p._load_init(onp.ones((2, 2), "float32"))
    p._load_init(onp.ones((2, 2), "float32"), cast_dtype=True)
    assert p.data().dtype == onp.float16
    q = Parameter("q", shape=(2, -1))
    q._load_init(onp.ones((2, 5), "float64"), cast_dtype=True, dtype_source="saved")
    assert q.shape == (2, 5) and q.data().dtype == onp.float64
    s = Parameter("s")                               # shape None stays None (SymbolBlock params)
    s._load_init(onp.ones((3,), "float32"))
    assert s.shape is None and s.data().shape == (3,)


def test_var_attrs():
    p = Parameter("bias", shape=(3,), init="zeros", lr_mult=2)
    attrs = p.var().outputs[0][0].attrs
    assert attrs == {"__profiler_scope__": "<unk>:", "__shape__": "(3,)", "__dtype__": "0",
                     "__lr_mult__": "2", "__wd_mult__": "1.0", "__init__": "zeros",
                     "__storage_type__": "0"}
    assert p.var().name.endswith("_bias") and p.var() is p.var()


def test_constant():
    c = Constant(np.ones((2, 2)))
    assert repr(c) == "Constant (shape=(2, 2), dtype=float32)"
    assert c.name == "const" and c.grad_req == "null"
    with pytest.warns(UserWarning, match='Constant parameter "const" does not support grad_req other '
                                         'than "null", and new value "write" is ignored.'):
        c.grad_req = "write"
    c.initialize()
    assert float(c.data().sum()) == 4.0


def test_stype_checks():
    with pytest.raises(AssertionError, match="stype for Parameter must be one of 'default', "
                                             "'row_sparse', or 'csr', but got 'bad'"):
        Parameter("w", stype="bad")
    p = Parameter("w", shape=(2,), stype="row_sparse")
    with pytest.raises(ValueError, match="Currently stype row_sparse is not supported"):
        p.initialize()
