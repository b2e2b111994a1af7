"""Lazy imports of the optional ONNX packages, with an error that names the missing one."""
from __future__ import annotations

import importlib
from types import ModuleType

from ..base import MXNetError


class MissingDependencyError(MXNetError, ImportError):
    """An optional package the requested feature needs is not installed."""


_PIP = {"onnx": "onnx", "onnxruntime": "onnxruntime", "onnx.helper": "onnx",
        "onnx.numpy_helper": "onnx"}


def require(module: str, feature: str = "ONNX support") -> ModuleType:
    """Import `module` or raise MissingDependencyError naming its pip package."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        pkg = _PIP.get(module, module.split(".")[0])
        raise MissingDependencyError(
            f"{feature} needs the '{pkg}' package, which is not installed "
            f"(pip install {pkg}): {e}") from None
