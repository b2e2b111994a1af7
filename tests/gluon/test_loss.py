"""gluon.loss forward values against MXNet 2.0.0b1. The reference numbers were produced by real
MXNet 2.0.0b1 on the inputs below (the recording script is in this file's REFERENCE_SCRIPT)."""
from __future__ import annotations

import json  # noqa: F401  (REFERENCE_SCRIPT prints JSON)

import numpy as onp
import pytest

from framework import np
from framework.gluon import loss as L

pred = onp.array([[0.2, -1.5, 3.0], [2.5, 0.1, -0.7]], dtype="float32")
lab = onp.array([[1, -1, 1], [-1, 1, 1]], dtype="float32")
lab01 = (lab + 1) / 2
prob = onp.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], dtype="float32")
sw = onp.array([[0.5], [2.0]], dtype="float32")
P, Y, Y01, PR, SW = (np.array(a) for a in (pred, lab, lab01, prob, sw))

# MXNet 2.0.0b1's outputs for the same calls
MXNET = {
 "SigmoidBCE": [
  0.14135657250881195,
  2.884314775466919
 ],
 "SigmoidBCE_posw": [
  0.4739948809146881,
  1.2582931518554688
 ],
 "SigmoidBCE_fromsig": [
  0.8864200115203857,
  1.4742828607559204
 ],
 "SoftmaxCE_dense": [
  1.9794477224349976,
  1.3235235214233398
 ],
 "KLDiv": [
  0.3165982663631439,
  0.1418592482805252
 ],
 "Huber": [
  0.6416666507720947,
  2.5333335399627686
 ],
 "Hinge": [
  0.2666666805744171,
  2.0333335399627686
 ],
 "SquaredHinge": [
  0.2133333534002304,
  5.316666603088379
 ],
 "Logistic_signed": [
  0.2827131450176239,
  1.4421573877334595
 ],
 "Logistic_binary": [
  0.2827131450176239,
  1.4421573877334595
 ],
 "Triplet": [
  5.59999942779541,
  0.0
 ],
 "PoissonNLL": [
  6.086690425872803,
  3.294750213623047
 ],
 "PoissonNLL_full": [
  10.214171409606934,
  5.997060775756836
 ],
 "CosineEmbedding": [
  0.4737553596496582,
  0.7377555966377258
 ]
}

CASES = {
    "SigmoidBCE": lambda: L.SigmoidBCELoss()(P, Y01, SW),
    "SigmoidBCE_posw": lambda: L.SigmoidBCELoss()(P, Y01, None, np.array([2.0, 1.0, 0.5])),
    "SigmoidBCE_fromsig": lambda: L.SigmoidBCELoss(from_sigmoid=True)(PR, Y01),
    "SoftmaxCE_dense": lambda: L.SoftmaxCELoss(sparse_label=False)(P, PR),
    "KLDiv": lambda: L.KLDivLoss(from_logits=False)(P, PR),
    "Huber": lambda: L.HuberLoss(rho=1)(P, Y * 2),
    "Hinge": lambda: L.HingeLoss()(P, Y),
    "SquaredHinge": lambda: L.SquaredHingeLoss()(P, Y),
    "Logistic_signed": lambda: L.LogisticLoss()(P, Y),
    "Logistic_binary": lambda: L.LogisticLoss(label_format="binary")(P, Y01),
    "Triplet": lambda: L.TripletLoss()(P, PR, Y),
    "PoissonNLL": lambda: L.PoissonNLLLoss()(P, PR * 3),
    "PoissonNLL_full": lambda: L.PoissonNLLLoss(from_logits=False, compute_full=True)(PR, P * P + 1),
    "CosineEmbedding": lambda: L.CosineEmbeddingLoss()(P, PR, np.array([1, -1])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_matches_mxnet(name):
    got = CASES[name]().asnumpy()
    onp.testing.assert_allclose(got, onp.asarray(MXNET[name], onp.float32), rtol=1e-4, atol=1e-5)


def test_sparse_softmax_ce_and_weights():
    out = onp.array([[0.0, 2.0], [1.0, 4.0]], onp.float32)
    label = onp.array([0, 1])
    logp = out - onp.log(onp.exp(out).sum(-1, keepdims=True))
    want = -logp[onp.arange(2), label]
    got = L.SoftmaxCELoss()(np.array(out), np.array(label)).asnumpy()
    onp.testing.assert_allclose(got, want, rtol=1e-5)
    got_w = L.SoftmaxCELoss(weight=0.5)(np.array(out), np.array(label)).asnumpy()
    onp.testing.assert_allclose(got_w, want * 0.5, rtol=1e-5)


def test_l1_l2_reduce_all_but_the_batch_axis():
    x = onp.arange(12, dtype=onp.float32).reshape(2, 3, 2)
    y = onp.zeros_like(x)
    onp.testing.assert_allclose(L.L1Loss()(np.array(x), np.array(y)).asnumpy(),
                                x.reshape(2, -1).mean(1))
    onp.testing.assert_allclose(L.L2Loss()(np.array(x), np.array(y)).asnumpy(),
                                (x ** 2 / 2).reshape(2, -1).mean(1))
    onp.testing.assert_allclose(L.L1Loss(batch_axis=1)(np.array(x), np.array(y)).asnumpy(),
                                x.transpose(1, 0, 2).reshape(3, -1).mean(1))


def test_loss_hybridizes():
    net = L.SoftmaxCELoss()
    net.hybridize()
    a = net(P, np.array([0, 2])).asnumpy()
    b = L.SoftmaxCELoss()(P, np.array([0, 2])).asnumpy()
    onp.testing.assert_allclose(a, b, rtol=1e-6)


REFERENCE_SCRIPT = 'import json, numpy as onp\nimport mxnet as mx\nfrom mxnet import np, gluon\nmx.npx.set_np()\npred = onp.array([[0.2, -1.5, 3.0], [2.5, 0.1, -0.7]], dtype=\'float32\')\nlab = onp.array([[1, -1, 1], [-1, 1, 1]], dtype=\'float32\')\nlab01 = (lab + 1) / 2\nprob = onp.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], dtype=\'float32\')\nsw = onp.array([[0.5], [2.0]], dtype=\'float32\')\nL = gluon.loss\nP, Y, Y01, PR, SW = (np.array(a) for a in (pred, lab, lab01, prob, sw))\nout = {\n "SigmoidBCE": L.SigmoidBCELoss()(P, Y01, SW),\n "SigmoidBCE_posw": L.SigmoidBCELoss()(P, Y01, None, np.array([2.0, 1.0, 0.5])),\n "SigmoidBCE_fromsig": L.SigmoidBCELoss(from_sigmoid=True)(PR, Y01),\n "SoftmaxCE_dense": L.SoftmaxCELoss(sparse_label=False)(P, PR),\n "KLDiv": L.KLDivLoss(from_logits=False)(P, PR),\n "Huber": L.HuberLoss(rho=1)(P, Y * 2),\n "Hinge": L.HingeLoss()(P, Y),\n "SquaredHinge": L.SquaredHingeLoss()(P, Y),\n "Logistic_signed": L.LogisticLoss()(P, Y),\n "Logistic_binary": L.LogisticLoss(label_format=\'binary\')(P, Y01),\n "Triplet": L.TripletLoss()(P, PR, Y),\n "PoissonNLL": L.PoissonNLLLoss()(P, PR * 3),\n "PoissonNLL_full": L.PoissonNLLLoss(from_logits=False, compute_full=True)(PR, P * P + 1),\n "CosineEmbedding": L.CosineEmbeddingLoss()(P, PR, np.array([1, -1])),\n}\nprint(json.dumps({k: v.asnumpy().tolist() for k, v in out.items()}))\n'
