"""Convert small networks to bfloat16 with REAL MXNet 1.9.1 (`mx.contrib.amp.convert_hybrid_block`,
`target_dtype='bfloat16'`) and export them → tests/fixtures/mxnet-1.9.1-bf16/, read by
tests/contrib/test_amp_mxnet_fixtures.py. Run in the MXNet 1.9.1 venv:

    .mxnet-venvs/mxnet-1.9.1/bin/python tests/interop/gen_amp_fixtures.py

Per case `<name>`:
  <name>_fp32-symbol.json / -0000.params   the float32 network (the conversion's input)
  <name>-symbol.json / -0000.params        the converted block's export (MXNet's default
                                           `remove_amp_cast=True`)
  <name>-full-symbol.json                  the converted graph with every amp_cast/amp_multicast
  <name>-io.npz                            data, the float32 output `float_output`, and `output`
                                           (MXNet's bf16 output) when this CPU can run bf16
A CPU without avx512_bf16 makes MXNet's oneDNN refuse bf16 convolutions ("could not create a
primitive descriptor"): then `output` is absent and the tests compare with float32 under the
bf16 bound.
"""
from __future__ import annotations

import os
import sys
import warnings

warnings.simplefilter("ignore")
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from mxnet.contrib import amp  # noqa: E402
from mxnet.gluon import nn  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "mxnet-1.9.1-bf16")
sys.path.insert(0, HERE)
from gen_int8_fixtures import Residual as _Int8Residual, conv_bn  # noqa: E402


class Residual(_Int8Residual):
    """conv-bn-relu, conv-bn, + shortcut (a widest-type add), then the `relu` operator."""
    def hybrid_forward(self, F, x):
        return F.relu(self.body(x) + x)


class Head(nn.HybridBlock):
    """Concat of two branches, softmax (a float32 op) over the logits."""
    def __init__(self, **kw):
        super().__init__(**kw)
        self.a, self.b = conv_bn(4, 1), conv_bn(4, 3)
        self.pool = nn.GlobalAvgPool2D()
        self.fc = nn.Dense(10)

    def hybrid_forward(self, F, x):
        y = F.concat(self.a(x), self.b(x), dim=1)
        return F.softmax(self.fc(self.pool(y)))


def convnet():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(),
            nn.Flatten(), nn.Dense(10))
    return net


def resnet():
    net = nn.HybridSequential()
    net.add(conv_bn(8), Residual(8), Head())
    return net


# name → (builder, input shape, convert_hybrid_block keyword arguments)
CASES = {
    "convnet_bf16": (convnet, (2, 3, 8, 8), {}),
    "convnet_bf16_castparams": (convnet, (2, 3, 8, 8), dict(cast_optional_params=True)),
    "resnet_bf16": (resnet, (2, 3, 8, 8), {}),
}


def _randomize(net, seed):
    """Xavier weights plus BatchNorm statistics away from their defaults (so folding is tested)."""
    rng = np.random.default_rng(seed)
    for name, p in net.collect_params().items():
        if name.endswith(("running_mean", "beta", "bias")):
            p.set_data(mx.nd.array(rng.normal(0, 0.1, p.shape)))
        elif name.endswith(("running_var", "gamma")):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, p.shape)))


def make(name, builder, shape, kw, seed):
    mx.random.seed(seed)
    net = builder()
    net.initialize(mx.init.Xavier())
    data = mx.nd.array(np.random.default_rng(seed).normal(0, 1, shape).astype(np.float32))
    net(data)
    _randomize(net, seed)
    net.hybridize()
    ref = net(data).asnumpy()
    net.export(os.path.join(OUT, f"{name}_fp32"))
    block = amp.convert_hybrid_block(net, target_dtype="bfloat16", ctx=mx.cpu(), **kw)
    block.hybridize()
    io = {"data": data.asnumpy(), "float_output": ref}
    try:
        io["output"] = block(data).asnumpy()
    except mx.base.MXNetError as e:
        print(f"{name}: MXNet cannot run bf16 on this CPU ({str(e).splitlines()[0][:80]})")
        block = amp.convert_hybrid_block(net, target_dtype="bfloat16", ctx=mx.cpu(), **kw)
    # export needs a cached graph: trace with a symbol-only pass when the forward failed
    if "output" not in io:
        block._build_cache(data)
    block.export(os.path.join(OUT, name))
    sym = block._cached_graph[1]
    with open(os.path.join(OUT, f"{name}-full-symbol.json"), "w") as f:
        f.write(sym.tojson(remove_amp_cast=False))
    np.savez(os.path.join(OUT, f"{name}-io.npz"), **io)
    print(name, "written", "with" if "output" in io else "without", "MXNet's bf16 output")


def main():
    os.makedirs(OUT, exist_ok=True)
    for i, (name, (builder, shape, kw)) in enumerate(CASES.items()):
        make(name, builder, shape, kw, seed=100 + i)


if __name__ == "__main__":
    main()
