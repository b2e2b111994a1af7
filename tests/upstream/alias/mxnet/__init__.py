"""An `mxnet` package that is hybridserve's `framework` under MXNet's name.

It exists only to run MXNet's own unit tests (scripts/mxnet_upstream_tests.sh) against the
framework: `import mxnet as mx` gives `framework`, and `mxnet.<sub>` imports resolve to the
framework's module of the same role (`mxnet.np` → `framework.numpy`, `mxnet.gluon.nn` →
`framework.gluon.nn`, …) so each module exists once. The few helpers that are test tooling rather
than framework (`mxnet.test_utils`, `mxnet.util`) live beside this file.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys

import framework as _fw
from framework import *  # noqa: F401,F403

# mxnet.<name> → framework module, where MXNet's name differs from the framework's
_RENAMES = {"np": "numpy", "npx": "numpy_extension", "sym": "symbol", "init": "initializer",
            "context": "device"}
_HERE = os.path.dirname(__file__)


def _own(rest: str) -> bool:
    """True when this alias package ships `mxnet.<rest>` itself (a file or a folder here)."""
    path = os.path.join(_HERE, *rest.split("."))
    return os.path.isdir(path) or os.path.isfile(path + ".py")


class _Loader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):  # the framework module is already executed
        return None


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("mxnet.") or _own(fullname[len("mxnet."):].split(".")[0]):
            return None
        head, *tail = fullname[len("mxnet."):].split(".")
        name = ".".join(["framework", _RENAMES.get(head, head), *tail])
        try:
            if importlib.util.find_spec(name) is None:
                return None
        except ModuleNotFoundError:   # a parent is a plain module, not a package
            return None
        return importlib.util.spec_from_loader(fullname, _Loader(name))


sys.meta_path.insert(0, _AliasFinder())

from . import base, ndarray, test_utils  # noqa: E402,F401
from .ndarray import _internal  # noqa: E402,F401
from framework import util  # noqa: E402,F401
from framework import autograd, gluon, initializer, numpy, numpy_extension, random, symbol  # noqa: E402,F401,I001

np = numpy
npx = numpy_extension
sym = symbol
init = initializer
context = device = _fw.device
np_shape = util.np_shape
use_np = util.use_np
__version__ = _fw.__version__
nd = ndarray
