"""The process-wide warm-up before the first measured load (memory.measured's `warm`): a tiny
convolution + dense model, exported by the framework into a temp directory and loaded with the
server's own limits and engine, so that importing and initialising the engine's libraries is
paid once here instead of being charged to whichever model the server loads first."""
from __future__ import annotations

import tempfile
from pathlib import Path

from framework import np as fnp
from framework.gluon import nn

from ..repository.config import parse_config
from ..repository.store import find_files
from .runner import Runner

_CONFIG = {"inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 1, 8, 8]}],
           "max_batch_size": 2}


def warm_runner(limits: dict) -> Runner:
    """Load the tiny model as a model is loaded (`limits`: registry.load_limits)."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(2, 3), nn.Activation("relu"), nn.Dense(2))
    net.initialize()
    net.hybridize()
    net(fnp.zeros((1, 1, 8, 8)))
    with tempfile.TemporaryDirectory(prefix="hybridserve-warm-") as d:
        net.export(str(Path(d) / "warm"))
        return Runner.load("warm-up", "0", find_files(Path(d)), parse_config(_CONFIG), **limits)
