"""Quantize small networks with REAL MXNet 1.9.1 (`mx.contrib.quantization.quantize_net`, oneDNN
backend) and export them with their inputs and MXNet's INT8 outputs → tests/fixtures/mxnet-1.9.1-int8/,
read by tests/int8/test_mxnet_int8_exports.py. Run in the MXNet 1.9.1 venv:

    .mxnet-venvs/mxnet-1.9.1/bin/python tests/interop/gen_int8_fixtures.py [--zoo DIR]

Each fixture `<name>-symbol.json`, `<name>-0000.params`, `<name>-io.npz` (data, MXNet's INT8
output `output`, the float32 network's output `float_output`). `--zoo DIR` quantizes ResNet-18/50 v1
and MobileNet v2 1.0 (`mobilenetv2_1_0`) from the zoo exports (artifacts/interop/zoo-1.9.1) into DIR (naive calibration),
with the same io files, for the interop checks and bench/int8_bench.py.
"""
from __future__ import annotations

import argparse
import os
import warnings

warnings.simplefilter("ignore")
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from mxnet.contrib.quantization import quantize_net  # noqa: E402
from mxnet.gluon import nn  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "mxnet-1.9.1-int8")
ZOO = os.path.join(HERE, "..", "..", "artifacts", "interop", "zoo-1.9.1")


def conv_bn(ch, k=3, stride=1, groups=1, act="relu"):
    seq = nn.HybridSequential()
    seq.add(nn.Conv2D(ch, k, stride, k // 2, groups=groups, use_bias=False), nn.BatchNorm())
    if act == "relu6":
        seq.add(nn.HybridLambda(lambda F, x: F.clip(x, 0, 6)))
    elif act:
        seq.add(nn.Activation(act))
    return seq


class Residual(nn.HybridBlock):
    """ResNet v1 basic block: conv-bn-relu, conv-bn, + shortcut, relu."""
    def __init__(self, ch, **kw):
        super().__init__(**kw)
        self.body = nn.HybridSequential()
        self.body.add(conv_bn(ch), conv_bn(ch, act=None))
        self.act = nn.Activation("relu")

    def hybrid_forward(self, F, x):
        return self.act(self.body(x) + x)


class InvertedResidual(nn.HybridBlock):
    """MobileNet v2 block: 1x1 expand (relu6), depthwise 3x3 (relu6), 1x1 linear, + shortcut."""
    def __init__(self, ch, t=4, **kw):
        super().__init__(**kw)
        self.body = nn.HybridSequential()
        self.body.add(conv_bn(ch * t, 1, act="relu6"), conv_bn(ch * t, 3, groups=ch * t, act="relu6"),
                      conv_bn(ch, 1, act=None))

    def hybrid_forward(self, F, x):
        return self.body(x) + x


class Branches(nn.HybridBlock):
    """Two branches concatenated (Inception/DenseNet style)."""
    def __init__(self, **kw):
        super().__init__(**kw)
        self.a, self.b = conv_bn(8, 1), conv_bn(8, 3)

    def hybrid_forward(self, F, x):
        return F.concat(self.a(x), self.b(x), dim=1)


def convnet():
    net = nn.HybridSequential()
    net.add(conv_bn(8), nn.MaxPool2D(2), nn.Conv2D(16, 3, padding=1, activation="relu"),
            nn.AvgPool2D(2), nn.Flatten(), nn.Dense(32, activation="relu"), nn.Dense(10))
    return net


def resnet_block():
    net = nn.HybridSequential()
    net.add(conv_bn(16), Residual(16), Residual(16), Branches(), nn.GlobalAvgPool2D(), nn.Dense(10))
    return net


def mobilenet_block():
    net = nn.HybridSequential()
    net.add(conv_bn(8, stride=2, act="relu6"), InvertedResidual(8), InvertedResidual(8),
            conv_bn(32, 1, act="relu6"), nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(10))
    return net


def mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(64, activation="relu", prefix="fc0_"),
            nn.Dense(32, activation="relu", prefix="fc1_"), nn.Dense(10, prefix="fc2_"))
    return net


class AddBranches(nn.HybridBlock):
    """Pooled branches summed (an add no convolution can absorb), ReLU after a pool."""
    def __init__(self, **kw):
        super().__init__(**kw)
        self.a, self.b = conv_bn(8), conv_bn(8, act=None)
        self.pa, self.pb = nn.MaxPool2D(2), nn.AvgPool2D(2)
        self.act = nn.Activation("relu")

    def hybrid_forward(self, F, x):
        return self.act(self.pa(self.a(x)) + self.pb(self.b(x)))


def add_branches():
    net = nn.HybridSequential()
    net.add(AddBranches(), nn.Conv2D(8, 1), nn.Flatten(), nn.Dense(10))
    return net


# name → (builder, input shape, quantize_net keyword arguments)
CASES = {
    "convnet_naive_auto": (convnet, (2, 3, 16, 16), dict(calib_mode="naive", quantized_dtype="auto")),
    "convnet_entropy_auto": (convnet, (2, 3, 16, 16), dict(calib_mode="entropy", quantized_dtype="auto")),
    "resnet_naive_auto": (resnet_block, (2, 3, 16, 16), dict(calib_mode="naive", quantized_dtype="auto")),
    "resnet_naive_int8": (resnet_block, (2, 3, 16, 16), dict(calib_mode="naive", quantized_dtype="int8")),
    "resnet_entropy_auto": (resnet_block, (2, 3, 16, 16),
                            dict(calib_mode="entropy", quantized_dtype="auto")),
    # uint8 throughout: the network's input is non-negative (images before normalisation)
    "convnet_naive_uint8": (convnet, (2, 3, 16, 16), dict(calib_mode="naive", quantized_dtype="uint8",
                                                          positive=True)),
    "addbranches_naive_auto": (add_branches, (2, 3, 16, 16),
                               dict(calib_mode="naive", quantized_dtype="auto")),
    "mobilenet_naive_auto": (mobilenet_block, (2, 3, 32, 32),
                             dict(calib_mode="naive", quantized_dtype="auto")),
    "mlp_naive_auto": (mlp, (4, 20), dict(calib_mode="naive", quantized_dtype="auto")),
    "mlp_naive_exclude": (mlp, (4, 20), dict(calib_mode="naive", quantized_dtype="auto",
                                             exclude_layers=["fc1_fwd"])),
    "convnet_none_auto": (convnet, (2, 3, 16, 16), dict(calib_mode="none", quantized_dtype="auto")),
}


def randomize(net, rng):
    """BatchNorm statistics and biases away from their trivial initial values."""
    for name, p in net.collect_params().items():
        v = p.data()
        if name.endswith("running_mean") or name.endswith("beta") or name.endswith("bias"):
            p.set_data(mx.nd.array(rng.normal(0, 0.1, v.shape)))
        elif name.endswith("running_var") or name.endswith("gamma"):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, v.shape)))


def sample(rng, shape, positive=False):
    x = rng.normal(0, 1, shape).astype(np.float32)
    return np.abs(x) if positive else x


def quantize(net, shape, kw, rng):
    kw = dict(kw)
    calib = sample(rng, (16,) + shape[1:], kw.pop("positive", False))
    it = mx.io.NDArrayIter(mx.nd.array(calib), batch_size=shape[0])
    return quantize_net(net, calib_data=it, num_calib_examples=16, ctx=mx.cpu(),
                        data_shapes=[mx.io.DataDesc("data", shape)], **kw)


def make_case(name, builder, shape, kw, out):
    rng = np.random.default_rng(sum(map(ord, name)))
    mx.random.seed(len(name))
    net = builder()
    net.initialize(mx.init.Xavier())
    x = sample(rng, shape, kw.get("positive", False))
    net(mx.nd.array(x))
    randomize(net, rng)
    net.hybridize()
    ref = net(mx.nd.array(x)).asnumpy()
    q = quantize(net, shape, kw, rng)
    q.hybridize(static_alloc=True, static_shape=True)
    y = q(mx.nd.array(x)).asnumpy()
    prefix = os.path.join(out, name)
    q.export(prefix)
    np.savez(prefix + "-io.npz", data=x, output=y, float_output=ref, **internals(prefix, x))
    print(f"{name}: max|int8 - float| = {np.abs(y - ref).max():.4f} of max|float| {np.abs(ref).max():.3f}")


def internals(prefix, x):
    """Every quantized (int8/uint8/int32) tensor and range the exported graph computes, by MXNet's
    output name: the tests compare them level by level."""
    sym = mx.sym.load(prefix + "-symbol.json")
    params = mx.nd.load(prefix + "-0000.params")
    args = {k[4:]: v for k, v in params.items() if k.startswith("arg:")}
    aux = {k[4:]: v for k, v in params.items() if k.startswith("aux:")}
    inner = sym.get_internals()
    names = [o for o in inner.list_outputs() if o != "data" and o not in args and o not in aux]
    args["data"] = mx.nd.array(x)
    exe = mx.sym.Group([inner[o] for o in names]).bind(mx.cpu(), args, aux_states=aux,
                                                       grad_req="null")
    outs = exe.forward(is_train=False)
    return {f"internal:{o}": v.asnumpy() for o, v in zip(names, outs)
            if v.dtype != np.float32 or v.size == 1}


def make_zoo(name, out, rng):
    sym = os.path.join(ZOO, f"{name}-symbol.json")
    net = mx.gluon.SymbolBlock.imports(sym, ["data"], os.path.join(ZOO, f"{name}-0000.params"))
    x = np.load(os.path.join(ZOO, f"{name}-io.npz"))["data"].astype(np.float32)
    ref = net(mx.nd.array(x)).asnumpy()
    q = quantize(net, x.shape, dict(calib_mode="naive", quantized_dtype="auto"), rng)
    q.hybridize(static_alloc=True, static_shape=True)
    y = q(mx.nd.array(x)).asnumpy()
    prefix = os.path.join(out, f"{name}_int8")
    q.export(prefix)
    np.savez(prefix + "-io.npz", data=x, output=y, float_output=ref)
    print(f"{name}: top-1 int8 {y.argmax()} float {ref.argmax()}, max|Δ| {np.abs(y - ref).max():.4f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zoo", help="also quantize the zoo exports into this directory")
    ap.add_argument("--only", nargs="*", help="case names")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    for name, (builder, shape, kw) in CASES.items():
        if not args.only or name in args.only:
            try:
                make_case(name, builder, shape, kw, OUT)
            except mx.base.MXNetError as e:   # record what MXNet itself refuses, keep going
                print(f"{name}: MXNet failed: {str(e).splitlines()[-1]}")
    if args.zoo:
        os.makedirs(args.zoo, exist_ok=True)
        rng = np.random.default_rng(19)
        for name in ("resnet18_v1", "resnet50_v1", "mobilenetv2_1_0"):
            make_zoo(name, args.zoo, rng)


if __name__ == "__main__":
    main()
