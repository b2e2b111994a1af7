"""The np / npx front-ends come from the op registry: every exposed name resolves to an op and
exists on its front-end module, generated functions agree with their op's inputs and attributes,
and internal op names (`_npi_*`, `_npx_*`, `_contrib_*`) stay inside framework/ops."""
import inspect
import sys
from pathlib import Path

import numpy as onp
import pytest

import framework as mx
from framework import frontend
from framework.ops import registry
from framework.ops.registry import front_ends
from framework.symbol.trace import Tracer, tracing

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import internal_op_names  # noqa: E402

_MODULES = {"np": mx.np, "np.linalg": mx.np.linalg, "np.random": mx.np.random, "npx": mx.npx,
            "npx.random": mx.npx.random}


def _exposed():
    registry._ensure_loaded()
    out = []
    for name, (_, spec) in sorted(registry._FRONT.items()):
        qual, _, role = name.partition(":")
        ns, _, fn = qual.rpartition(".")
        out.append((ns, fn, role, spec))
    return out


def test_internal_op_names_outside_ops_at_most_40():
    found = internal_op_names.scan()
    assert len(found) <= 40, "\n".join(found)


def test_the_spelling_count_sees_names_and_skips_lookalikes():
    src = 'invoke("_npi_add", x)  # `_npx_relu`\nis_np_shape(); from .._np_state import f\n'
    assert [s.split()[-1] for s in internal_op_names.spellings_in(src, "x.py")] == \
        ["_npi_add", "_npx_relu"]


@pytest.mark.parametrize("ns,fn,role,spec", _exposed())
def test_every_exposed_name_is_a_front_end_function(ns, fn, role, spec):
    op = registry.front_op(f"{ns}.{fn}" + (f":{role}" if role else ""))
    assert registry.get_op(op.name) is op
    if ns in _MODULES:      # np.ndarray.__getitem__:mask is a method's, not a module's
        assert callable(getattr(_MODULES[ns], fn))


@pytest.mark.parametrize("ns,fn,spec", [(ns, fn, spec) for ns, fn, role, spec in _exposed()
                                        if spec is not None])
def test_generated_signature_matches_its_op(ns, fn, spec):
    op = registry.front_op(f"{ns}.{fn}")
    f = getattr(_MODULES[ns], fn)
    params = inspect.signature(f).parameters.values()
    inputs = [p.name for p in params if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
    defaults = {p.name: p.default for p in params if p.default is not p.empty}
    assert set(defaults) <= set(op.attrs), f"{ns}.{fn}: {sorted(defaults)} not in {sorted(op.attrs)}"
    parsed = op.parse_attrs(defaults)       # each default is one the op's schema takes
    assert len(inputs) == len(op.input_names(parsed))


def test_generated_function_runs_and_binds_like_python():
    x = mx.np.array(onp.arange(9.0).reshape(3, 3))
    onp.testing.assert_array_equal(mx.np.tril(x, k=-1).asnumpy(), onp.tril(x.asnumpy(), -1))
    onp.testing.assert_array_equal(mx.np.diagonal(x, 1).asnumpy(), onp.diagonal(x.asnumpy(), 1))
    onp.testing.assert_allclose(mx.np.linalg.det(x + mx.np.eye(3)).asnumpy(),
                                onp.linalg.det(x.asnumpy() + onp.eye(3)), rtol=1e-5)
    with pytest.raises(TypeError):
        mx.np.tril(x, kk=1)
    with pytest.raises(TypeError):
        mx.np.tril()
    assert mx.npx.relu(x, name="ignored").shape == (3, 3)     # `**kwargs` in its signature


def test_generated_function_traces_its_op():
    x = mx.np.ones((3, 3))
    t = Tracer()
    t.bind_var(x, "data")
    with tracing(t):
        y = mx.np.triu(x, 1)
    nodes = [n for n in t.symbol([y]).topo() if not n.is_var]
    assert [(n.op, n.attrs["k"]) for n in nodes] == [(registry.front_op("np.triu"), "1")]


def test_binary_ufunc_picks_its_op_by_operand_kind():
    x = mx.np.array([1.0, 2.0])
    assert frontend.op("np.subtract:rscalar") is not frontend.op("np.subtract:scalar")
    onp.testing.assert_array_equal((5 - x).asnumpy(), [4.0, 3.0])
    onp.testing.assert_array_equal(mx.np.greater(1.5, x).asnumpy(), [True, False])


def test_front_ends_lists_a_namespace_and_role():
    unary = front_ends("np", "unary")
    assert {"sin", "abs", "absolute"} <= set(unary)
    assert unary["abs"][0] is unary["absolute"][0]


def test_a_name_exposed_twice_is_refused():
    with pytest.raises(RuntimeError, match="exposed twice"):
        registry.expose("_npi_add", "np.add:binary")


def test_unknown_front_end_name():
    with pytest.raises(KeyError):
        frontend.op("np.no_such_function")
    assert registry.find_front("npx.no_such_function") is None
