"""The runner tests' model: the committed MXNet 1.9.1 mini ResNet v1 (Convolution + BatchNorm +
residual adds) loaded by Runner.load with a declared batchable input."""
from __future__ import annotations

import numpy as np

from fixture_util import FIXTURES
from service.repository.config import DynamicBatching, ModelConfig, TensorSpec
from service.repository.store import ModelFiles
from service.runtime.runner import Runner

MX1 = FIXTURES / "mxnet-1.9.1"
NAME = "mini_resnet_v1"


def files(name: str = NAME) -> ModelFiles:
    return ModelFiles(MX1 / f"{name}-symbol.json", MX1 / f"{name}-0000.params")


def load(batching: DynamicBatching | None = None, max_batch_size: int = 4, **kw) -> Runner:
    cfg = ModelConfig(inputs=[TensorSpec(name="data", shape=[-1, 3, 16, 16])],
                      max_batch_size=max_batch_size, dynamic_batching=batching)
    return Runner.load(NAME, "1", files(), cfg, **kw)


def io() -> tuple[np.ndarray, np.ndarray]:
    """The recorded input and MXNet 1.9.1's output for it."""
    d = np.load(MX1 / f"{NAME}-io.npz")
    return d["data"].astype(np.float32), d["output"]
