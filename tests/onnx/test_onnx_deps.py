"""`import framework` needs neither onnx nor onnxruntime; asking for ONNX without them names the
missing package."""
import subprocess
import sys

import pytest

from framework.onnx import MissingDependencyError, lower_symbol

from onnx_util import op_symbol


def test_framework_imports_and_runs_without_onnx_packages():
    code = ("import sys; sys.modules['onnx'] = None; sys.modules['onnxruntime'] = None\n"
            "import framework as mx\n"
            "from framework.ops import get_op\n"
            "assert get_op('Convolution').onnx is not None\n"
            "print(mx.np.array([1.0, 2.0]).sum())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "3.0"


def test_lowering_without_the_package_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    sym = op_symbol("relu", {}, 1)
    with pytest.raises(MissingDependencyError, match="'onnx' package"):
        lower_symbol(sym, {}, {"x0": (2, 3)})


def test_export_without_onnx_names_it(monkeypatch, tmp_path):
    import framework as mx
    from framework.gluon import nn
    net = nn.Dense(3)
    net.initialize()
    net.hybridize()
    net(mx.np.ones((2, 4)))
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(MissingDependencyError, match="'onnx' package"):
        net.export(str(tmp_path / "dense"), format="onnx")
    assert not (tmp_path / "dense.onnx").exists()


def test_require_names_onnxruntime(monkeypatch):
    from framework.onnx import require
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(MissingDependencyError, match="'onnxruntime' package.*pip install "
                                                     "onnxruntime"):
        require("onnxruntime", "the ONNX Runtime backend")
