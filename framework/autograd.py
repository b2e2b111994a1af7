"""`mx.autograd` for an inference-only runtime: prediction mode is the only mode.

`pause()` / `predict_mode()` work (they are what inference code uses); recording gradients or
training mode raise a clear error instead of silently computing nothing.
"""
from __future__ import annotations

from contextlib import contextmanager


class TrainingNotSupportedError(NotImplementedError):
    pass


_MSG = ("hybridserve runs inference only: autograd recording and training mode are not "
        "supported. Train with MXNet (or another framework) and export the model.")


def is_recording() -> bool:
    return False


def is_training() -> bool:
    return False


@contextmanager
def pause(train_mode: bool = False):
    if train_mode:
        raise TrainingNotSupportedError(_MSG)
    yield


@contextmanager
def predict_mode():
    yield


def record(train_mode: bool = True):
    raise TrainingNotSupportedError(_MSG)


def train_mode():
    raise TrainingNotSupportedError(_MSG)


def backward(*args, **kwargs):
    raise TrainingNotSupportedError(_MSG)


def grad(*args, **kwargs):
    raise TrainingNotSupportedError(_MSG)
