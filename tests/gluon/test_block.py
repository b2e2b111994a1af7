"""Block: registration, reprs, collect_params, hooks, sharing, save/load (GLUON_SEMANTICS §1)."""
import gc
import warnings
import zipfile

import numpy as onp
import pytest

import framework as mx
from framework import np
from framework.gluon import Block, HookHandle, Parameter, nn


class Plain(nn.Block):
    def forward(self, x):
        return x


def test_setattr_registers_children_and_params_by_attribute_name():
    class B(nn.Block):
        def __init__(self):
            super().__init__()
            self.w = Parameter("myweight", shape=(2,))
            self.inner = nn.Dense(2, in_units=3)

        def forward(self, x):
            return x

    b = B()
    assert list(b.params) == ["w"] and b.w.name == "myweight"
    assert list(b.collect_params()) == ["w", "inner.weight", "inner.bias"]
    with pytest.raises(TypeError, match="Changing attribute type for inner from"):
        b.inner = Parameter("x")


def test_register_child_default_names_and_weak_refs():
    b = Plain()
    keep = nn.Dense(2)
    b.register_child(keep)
    b.register_child(nn.Dense(3))          # nothing else holds it
    gc.collect()
    assert list(b._children) == ["0", "1"]
    with pytest.raises(TypeError, match="weak object has gone away"):
        b.collect_params()


def test_repr_generic_and_nested_childless():
    class Outer(nn.Block):
        def __init__(self):
            super().__init__()
            self.leaf = Plain()
            self.d = nn.Dense(3, in_units=2)

        def forward(self, x):
            return x

    assert repr(Plain()) == "Plain(\n\n)"
    assert repr(Outer()) == ("Outer(\n  (leaf): Plain(\n  \n  )\n"
                             "  (d): Dense(2 -> 3, linear)\n)")


def test_collect_params_select_is_anchored_match():
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=3), nn.Dense(1, in_units=2))
    assert list(net.collect_params("1")) == ["1.weight", "1.bias"]
    assert list(net.collect_params(".*bias")) == ["0.bias", "1.bias"]
    assert list(net.collect_params("bias")) == []


def test_unregistered_container_warning_text():
    class Holder(nn.Block):
        def __init__(self):
            super().__init__()
            self.layers = {"a": nn.Dense(2)}

        def forward(self, x):
            return x

    with pytest.warns(UserWarning) as rec:
        Holder().collect_params()
    assert str(rec[0].message).startswith('"Holder.layers" is an unregistered container with Blocks.')
    assert str(rec[0].message).endswith("nn.Sequential/nn.HybridSequential instead. ")


def test_hooks_order_args_and_detach():
    d = nn.Dense(2, in_units=3)
    d.initialize()
    calls = []
    h1 = d.register_forward_pre_hook(lambda blk, inp: calls.append(("pre", type(inp))))
    h2 = d.register_forward_hook(lambda blk, inp, out: calls.append(("post", out.shape)))
    assert isinstance(h1, HookHandle)
    d(np.ones((1, 3)))
    assert calls == [("pre", tuple), ("post", (1, 2))]
    h1.detach()
    with h2:
        pass                                   # context manager detaches
    calls.clear()
    d(np.ones((1, 3)))
    assert calls == []
    with pytest.raises(AssertionError, match="The same handle cannot be attached twice."):
        h1.attach(d._forward_hooks, print)


def test_apply_is_post_order():
    net = nn.HybridSequential()
    net.add(nn.Dense(2), nn.Dense(3))
    seen = []
    assert net.apply(lambda b: seen.append(type(b).__name__)) is net
    assert seen == ["Dense", "Dense", "HybridSequential"]


def test_share_parameters_and_errors():
    a, b = nn.Dense(2, in_units=3), nn.Dense(2, in_units=3)
    assert b.share_parameters(a.collect_params()) is b
    assert b.weight is a.weight and b.bias is a.bias
    assert b.share_parameters(None) is b
    with pytest.raises(ValueError, match=r"'shared' should be in type of Dict. Get type <class 'tuple'>!"):
        b.share_parameters((1,))
    with pytest.warns(UserWarning, match="Parameter name nope is not in the current model!"):
        nn.Dense(2, in_units=3).share_parameters({"weight": a.weight, "nope": a.bias})


def test_initialize_block_init_is_default_only():
    d = nn.Dense(4, in_units=4)
    d.initialize(mx.init.Normal(1.0))
    assert float(abs(d.bias.data()).max()) == 0.0          # layer's 'zeros' wins
    assert float(abs(d.weight.data()).max()) > 0.07


def test_save_parameters_dedup_keeps_last_name_first_position(tmp_path):
    class S(nn.Block):
        def __init__(self):
            super().__init__()
            self.a = nn.Dense(2, in_units=2, use_bias=False)
            self.b = nn.Dense(2, in_units=2, use_bias=False)
            self.c = nn.Dense(2, in_units=2, use_bias=False)
            self.c.share_parameters(self.a.collect_params())

        def forward(self, x):
            return x

    s = S()
    with pytest.warns(UserWarning, match="is already initialized"):     # shared: seen twice
        s.initialize()
    s.save_parameters(str(tmp_path / "all.params"))
    s.save_parameters(str(tmp_path / "dedup.params"), deduplicate=True)
    assert zipfile.ZipFile(tmp_path / "all.params").namelist() == \
        ["a.weight.npy", "b.weight.npy", "c.weight.npy"]
    assert zipfile.ZipFile(tmp_path / "dedup.params").namelist() == ["c.weight.npy", "b.weight.npy"]
    t = S()
    t.load_parameters(str(tmp_path / "dedup.params"))
    assert onp.array_equal(t.a.weight.data().asnumpy(), s.a.weight.data().asnumpy())


def test_load_parameters_errors(tmp_path):
    d = nn.Dense(2, in_units=3)
    d.initialize()
    f = str(tmp_path / "d.params")
    d.save_parameters(f)
    with pytest.raises(AssertionError) as e:
        seq = nn.HybridSequential()
        seq.add(nn.Dense(2, in_units=3))
        seq.load_parameters(f)
    assert str(e.value) == ("Parameter '0.weight' is missing in 'file: " + f + "', which contains "
                            "parameters: 'bias', 'weight'. Set allow_missing=True to ignore missing "
                            "parameters.")
    with pytest.raises(ValueError) as e:
        nn.Dense(2, in_units=3, use_bias=False).load_parameters(f)
    assert str(e.value) == ("Parameter 'bias' loaded from 'file: " + f + "' is not present in Dict, "
                            "which contains parameters 'weight'. Set ignore_extra=True to ignore. ")
    with pytest.raises(AssertionError) as e:
        nn.Dense(2, in_units=4).load_parameters(f)
    assert str(e.value) == ("Failed loading Parameter 'weight' from saved params: shape "
                            "incompatible expected (2, 4) vs saved (2, 3)")
    ok = nn.Dense(2, in_units=3, use_bias=False)
    ok.load_parameters(f, ignore_extra=True)
    assert onp.array_equal(ok.weight.data().asnumpy(), d.weight.data().asnumpy())
    partial = nn.HybridSequential()
    partial.add(nn.Dense(2, in_units=3))
    partial.load_parameters(f, allow_missing=True, ignore_extra=True)   # nothing matches: no-op


def test_load_dict_strips_arg_aux_and_names_param_dict():
    d = nn.Dense(2, in_units=3)
    d.load_dict({"arg:weight": np.ones((2, 3)), "aux:bias": np.zeros((2,))})
    assert float(d.weight.data().sum()) == 6.0
    with pytest.raises(AssertionError, match="is missing in 'param_dict'"):
        nn.Dense(2, in_units=3).load_dict({"weight": np.ones((2, 3))})


def test_sequential_forward_passes_extra_args_to_first_child_only():
    class Add(nn.Block):
        def forward(self, x, y=None):
            return x if y is None else x + y

    class Pair(nn.Block):
        def forward(self, x, *args):
            return x, x * 2

    seq = nn.Sequential()
    seq.add(Add(), Pair(), Add())
    out = seq(np.ones((2,)), np.ones((2,)))
    assert onp.allclose(out.asnumpy(), 6.0)          # (1+1) → (2, 4) → 2+4
    seq2 = nn.Sequential()
    seq2.add(Pair())
    a, b = seq2(np.ones((1,)))
    assert float(b) == 2.0


def test_sequential_hybridize_warning_only_when_all_children_hybrid():
    net = nn.Sequential()
    net.add(nn.Dense(3), Plain())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net.hybridize()
        nn.Sequential().hybridize()
    net = nn.Sequential()
    net.add(nn.Dense(3))
    with pytest.warns(UserWarning, match="are HybridBlocks. Consider using HybridSequential"):
        net.hybridize()


def test_legacy_symbol_output_is_rejected():
    class Sym(nn.Block):
        def forward(self, x):
            return mx.sym.var("a")

    with pytest.raises(TypeError, match="Block's output ndarrays/symbols must be of type"):
        Sym()(np.ones((1,)))


def test_block_forward_not_implemented_and_prefix_kwarg():
    with pytest.raises(NotImplementedError):
        Block()(np.ones((1,)))
    with pytest.raises(TypeError):
        nn.Dense(2, prefix="dense0_")


def test_reset_ctx_deprecation_and_setattr_all_params():
    d = nn.Dense(2, in_units=2)
    d.initialize()
    with pytest.warns(DeprecationWarning, match="Block.reset_ctx has been renamed"):
        Block.reset_ctx(d, mx.cpu())
    d.setattr("grad_req", "null")
    assert {p.grad_req for p in d.collect_params().values()} == {"null"}
