"""`gluon.loss`: the forward computations of Gluon's losses (values for evaluation and export;
no gradients here). Each loss returns one value per sample: the elementwise loss, times
`sample_weight` (broadcast) and the scalar `weight`, averaged over every axis but `batch_axis`.
"""
from __future__ import annotations

import math

from .. import numpy as np
from .. import numpy_extension as npx
from .hybrid_block import HybridBlock

__all__ = ["Loss", "L1Loss", "L2Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "HuberLoss", "HingeLoss",
           "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
           "CosineEmbeddingLoss"]

_EPS = 1e-12


def _softrelu(x):
    return npx.activation(x, act_type="softrelu")


class Loss(HybridBlock):
    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def _weighted(self, loss, sample_weight=None, weight=None):
        if sample_weight is not None:
            loss = loss * sample_weight
        weight = self._weight if weight is None else weight
        if weight is not None:
            loss = loss * weight
        return loss

    def _per_sample(self, loss):
        axes = tuple(a for a in range(loss.ndim) if a != self._batch_axis % max(loss.ndim, 1))
        return np.mean(loss, axis=axes) if axes else loss

    def forward(self, *args):
        raise NotImplementedError


class L1Loss(Loss):
    """|label − pred|."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def forward(self, pred, label, sample_weight=None):
        label = npx.reshape_like(label, pred)
        return self._per_sample(self._weighted(np.abs(label - pred), sample_weight))


class L2Loss(Loss):
    """½ (label − pred)²."""

    def __init__(self, weight=1.0, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def forward(self, pred, label, sample_weight=None):
        label = npx.reshape_like(label, pred)
        loss = self._weighted(np.square(label - pred), sample_weight, self._weight / 2)
        return self._per_sample(loss)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross-entropy of sigmoid(pred) (or of pred itself with `from_sigmoid=True`)."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def forward(self, pred, label, sample_weight=None, pos_weight=None):
        label = npx.reshape_like(label, pred)
        if not self._from_sigmoid:
            # log(1 + exp(-|x|)) + max(x, 0) − x·y, stable for large |x|
            if pos_weight is None:
                loss = npx.relu(pred) - pred * label + _softrelu(-np.abs(pred))
            else:
                log_w = 1 + (pos_weight - 1) * label
                loss = pred - pred * label + log_w * (_softrelu(-np.abs(pred)) + npx.relu(-pred))
        else:
            pos = np.log(pred + _EPS) * label
            if pos_weight is not None:
                pos = pos * pos_weight
            loss = -(pos + np.log(1.0 - pred + _EPS) * (1.0 - label))
        return self._per_sample(self._weighted(loss, sample_weight))


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """−log softmax(pred)[label] (sparse labels) or −Σ label·log softmax(pred)."""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None, batch_axis=0,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis, self._sparse_label, self._from_logits = axis, sparse_label, from_logits

    def forward(self, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = npx.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            loss = -npx.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = npx.reshape_like(label, pred)
            loss = -np.sum(pred * label, axis=self._axis, keepdims=True)
        return self._per_sample(self._weighted(loss, sample_weight))


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """label · (log label − pred), pred being log-probabilities (`from_logits=True`)."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits, self._axis = from_logits, axis

    def forward(self, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = npx.log_softmax(pred, axis=self._axis)
        loss = label * (np.log(label + _EPS) - pred)
        return self._per_sample(self._weighted(loss, sample_weight))


class HuberLoss(Loss):
    """½/ρ·d² where |d| ≤ ρ, |d| − ½ρ beyond (d = label − pred)."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def forward(self, pred, label, sample_weight=None):
        d = np.abs(npx.reshape_like(label, pred) - pred)
        loss = np.where(d > self._rho, d - 0.5 * self._rho, (0.5 / self._rho) * np.square(d))
        return self._per_sample(self._weighted(loss, sample_weight))


class HingeLoss(Loss):
    """max(0, margin − pred·label), labels ±1."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def _hinge(self, pred, label):
        return npx.relu(self._margin - pred * npx.reshape_like(label, pred))

    def forward(self, pred, label, sample_weight=None):
        return self._per_sample(self._weighted(self._hinge(pred, label), sample_weight))


class SquaredHingeLoss(HingeLoss):
    """max(0, margin − pred·label)²."""

    def forward(self, pred, label, sample_weight=None):
        return self._per_sample(self._weighted(np.square(self._hinge(pred, label)), sample_weight))


class LogisticLoss(Loss):
    """log(1 + exp(−pred·label)), labels ±1 (`signed`) or 0/1 (`binary`)."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise ValueError(f"label_format can only be signed or binary, received {label_format}")
        self._label_format = label_format

    def forward(self, pred, label, sample_weight=None):
        label = npx.reshape_like(label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0          # to 0/1, then the stable binary form
        loss = npx.relu(pred) - pred * label + _softrelu(-np.abs(pred))
        return self._per_sample(self._weighted(loss, sample_weight))


class TripletLoss(Loss):
    """max(0, ‖a − p‖² − ‖a − n‖² + margin), summed over each sample's features."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def forward(self, pred, positive, negative, sample_weight=None):
        positive = npx.reshape_like(positive, pred)
        negative = npx.reshape_like(negative, pred)
        axes = tuple(range(1, pred.ndim))
        loss = np.sum(np.square(positive - pred) - np.square(negative - pred), axis=axes)
        return self._weighted(npx.relu(loss + self._margin), sample_weight)


class PoissonNLLLoss(Loss):
    """exp(pred) − target·pred (`from_logits`) or pred − target·log(pred); Stirling's term with
    `compute_full`."""

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits, self._compute_full = from_logits, compute_full

    def forward(self, pred, target, sample_weight=None, epsilon=1e-08):
        target = npx.reshape_like(target, pred)
        if self._from_logits:
            loss = np.exp(pred) - target * pred
        else:
            loss = pred - target * np.log(pred + epsilon)
        if self._compute_full:
            stirling = target * np.log(target) - target + 0.5 * np.log(2 * target * math.pi)
            loss = loss + np.where(target > 1, stirling, np.zeros_like(stirling))
        return self._per_sample(self._weighted(loss, sample_weight))


class CosineEmbeddingLoss(Loss):
    """1 − cos(x1, x2) for label 1, max(0, cos(x1, x2) − margin) for label −1."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def forward(self, input1, input2, label, sample_weight=None):
        input1 = npx.reshape_like(input1, input2)
        dot = np.sum(input1 * input2, axis=-1)
        norms = np.sqrt(np.sum(np.square(input1), axis=-1) * np.sum(np.square(input2), axis=-1))
        cos = dot / np.maximum(norms, _EPS)
        label = np.reshape(label, (-1,))
        loss = np.where(label == 1, 1 - cos, npx.relu(cos - self._margin))
        return self._weighted(loss, sample_weight)
