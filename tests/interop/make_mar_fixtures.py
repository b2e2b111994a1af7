"""Make the `.mar` fixtures of tests/fixtures/mar/ with the real `model-archiver` 1.0.x and
record MMS's answers for them (its own preprocessing code + an MXNet 1.9.1 Module forward).

Run in the MMS venv (`bash bench/server/setup_mms.sh`; MXNet 1.9.1 + multi-model-server 1.1.11
+ model-archiver):  <mms-venv>/bin/python tests/interop/make_mar_fixtures.py

Archives (tiny random-weight models, seeded):
  mms_mlp.mar an MLP (16 → 32 → 4, softmax), signature.json, MMS's tensor handler
  vision.mar  a small conv classifier on 3×8×8 images, signature.json, synset.txt, the stock
              `mxnet_vision_service:handle` handler
  custom.mar  the MLP with a custom handler module (hybridserve must ignore it)
With `--resnet DIR`: a ResNet-18 archive and two photos into DIR instead (for check_mar_mms.py).
reference.npz  per archive: the inputs and MMS's outputs; vision: `image.png` (32×32 RGB) and
               the class scores MMS's vision service computes for it; `cubic_*`: MMS's
               resize (MXNet imresize interp=2) of a random image to a few sizes.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import mxnet as mx
import numpy as np
from mms.utils.mxnet import image as mms_image
from PIL import Image

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "mar"
ARCHIVER = Path(sys.executable).parent / "model-archiver"
# what a custom handler looks like; hybridserve never runs it
CUSTOM_HANDLER = '''"""A custom MMS service (fixture): doubles the input before the model."""
raise RuntimeError("hybridserve must never import or run MMS handler code")
'''
# working MMS 1.x handlers named as MMS's model-service template names them (so that MMS can
# serve the archives for tests/interop/check_mar_mms.py); hybridserve never runs them
_HANDLER_COMMON = '''"""MMS 1.x service for this fixture (run by MMS only, never by hybridserve)."""
import json
import os

import mxnet as mx
import numpy as np

_state = {}


def _load(context):
    d = context.system_properties["model_dir"]
    sig = json.load(open(os.path.join(d, "signature.json")))
    name = context.manifest["model"]["modelName"]
    sym, args, aux = mx.model.load_checkpoint(os.path.join(d, name), 0)
    shape = [1 if k == 0 else s for k, s in enumerate(sig["inputs"][0]["data_shape"])]
    mod = mx.mod.Module(sym, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", tuple(shape))], for_training=False)
    mod.set_params(args, aux)
    syn = os.path.join(d, "synset.txt")
    labels = open(syn).read().split("\\n")[:-1] if os.path.exists(syn) else None
    _state.update(mod=mod, sig=sig, labels=labels)


def _forward(x):
    _state["mod"].forward(mx.io.DataBatch([x]), is_train=False)
    return _state["mod"].get_outputs()[0].asnumpy()


def _bodies(data, context):
    """The request bodies of a batch (none at MMS's initialising call, data=None)."""
    if not _state:
        _load(context)
    return [row.get("body") or row.get("data") for row in data or []]
'''
VISION_HANDLER = _HANDLER_COMMON + '''

def handle(data, context):
    """As MMS's template vision service: decode, resize to the signature's H x W, NCHW; top 5."""
    from mms.utils.mxnet import image
    out = []
    for body in _bodies(data, context):
        h, w = _state["sig"]["inputs"][0]["data_shape"][2:]
        x = image.transform_shape(image.resize(image.read(bytes(body)), w, h))
        p = _forward(x)[0]
        top = np.argsort(-p)[:5]
        out.append([{"probability": float(p[i]), "class": _state["labels"][i]} for i in top])
    return out
'''
TENSOR_HANDLER = _HANDLER_COMMON + '''

def handle(data, context):
    """Tensors in, tensors out: a JSON body {"data": nested list}."""
    out = []
    for body in _bodies(data, context):
        # MMS hands a JSON body over already parsed
        doc = body if isinstance(body, dict) else json.loads(bytes(body).decode())
        out.append(_forward(mx.nd.array(np.asarray(doc["data"], np.float32))).tolist())
    return out
'''


def mlp() -> mx.sym.Symbol:
    x = mx.sym.var("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=32, name="fc1"), act_type="relu")
    return mx.sym.softmax(mx.sym.FullyConnected(h, num_hidden=4, name="fc2"), name="prob")


def convnet() -> mx.sym.Symbol:
    x = mx.sym.var("data")
    x = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=4, name="conv1")
    x = mx.sym.Pooling(mx.sym.relu(x), kernel=(2, 2), stride=(2, 2), pool_type="avg")
    x = mx.sym.FullyConnected(mx.sym.flatten(x), num_hidden=5, name="fc")
    return mx.sym.softmax(x * 0.01, name="prob")        # inputs are 0..255: keep scores spread


def module(sym: mx.sym.Symbol, shape: tuple, seed: int) -> mx.mod.Module:
    mx.random.seed(seed)
    mod = mx.mod.Module(sym, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", shape)], for_training=False)
    mod.init_params(mx.init.Normal(0.5))
    return mod


def forward(mod: mx.mod.Module, x: np.ndarray) -> np.ndarray:
    mod.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=False)
    return mod.get_outputs()[0].asnumpy()


def archive(name: str, mod: mx.mod.Module, sig: dict, handler: tuple[str, str],
            extra: dict[str, str], work: Path) -> None:
    d = work / name
    d.mkdir()
    mod.save_checkpoint(str(d / name), 0)
    (d / "signature.json").write_text(json.dumps(sig))
    (d / handler[0]).write_text(handler[1])
    for fname, text in extra.items():
        (d / fname).write_text(text)
    entry = handler[0][:-3] + ":handle"
    subprocess.run([str(ARCHIVER), "--model-name", name, "--model-path", str(d),
                    "--handler", entry, "--export-path", str(OUT), "-f"], check=True)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(21)
    ref: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sig = {"inputs": [{"data_name": "data", "data_shape": [0, 16]}],
               "input_type": "application/json",
               "outputs": [{"data_name": "prob", "data_shape": [0, 4]}],
               "output_type": "application/json"}
        m = module(mlp(), (3, 16), seed=1)
        x = rng.standard_normal((3, 16)).astype(np.float32)
        ref["mlp_input"], ref["mlp_output"] = x, forward(m, x)
        archive("mms_mlp", m, sig, ("mxnet_model_service.py", TENSOR_HANDLER), {}, work)
        archive("custom", m, sig, ("my_service.py", CUSTOM_HANDLER), {}, work)

        vsig = {"inputs": [{"data_name": "data", "data_shape": [0, 3, 8, 8]}],
                "input_type": "image/jpeg",
                "outputs": [{"data_name": "softmax", "data_shape": [0, 5]}],
                "output_type": "application/json"}
        v = module(convnet(), (1, 3, 8, 8), seed=2)
        # 32×32 → 8×8: an integral shrink, where OpenCV's INTER_AREA is a plain 4×4 mean
        img = (rng.random((8, 8, 3)) * 255).astype(np.uint8).repeat(4, 0).repeat(4, 1)
        img = np.clip(img.astype(int) + rng.integers(-8, 9, img.shape), 0, 255).astype(np.uint8)
        Image.fromarray(img).save(OUT / "image.png")
        # MMS's vision service, step by step: decode RGB, resize to W×H (interp 2), NCHW
        arr = mms_image.read((OUT / "image.png").read_bytes())
        arr = mms_image.transform_shape(mms_image.resize(arr, 8, 8))
        ref["vision_tensor"] = arr.asnumpy()
        ref["vision_output"] = forward(v, arr.asnumpy())
        synset = "\n".join(f"n0000{i} class {i}" for i in range(5)) + "\n"
        archive("vision", v, vsig, ("mxnet_vision_service.py", VISION_HANDLER),
                {"synset.txt": synset}, work)
        # OpenCV INTER_CUBIC through MXNet (interp=2) at shrinking, growing and odd ratios
        src = (rng.random((13, 17, 3)) * 255).astype(np.uint8)
        ref["cubic_src"] = src
        for w, h in ((5, 7), (31, 23), (17, 6)):
            ref[f"cubic_{w}x{h}"] = mms_image.resize(mx.nd.array(src, dtype=np.uint8), w, h).asnumpy()
    np.savez(OUT / "reference.npz", **ref)
    print("wrote", sorted(p.name for p in OUT.iterdir()))


def resnet(out: Path) -> None:
    """`out/resnet.mar`: gluon's resnet18_v1 (seeded random weights) with a 1000-line synset and
    the vision handler, plus `out/photo.png` / `out/photo.jpg` (300×260, smooth gradients and
    noise) — too big to commit, made on demand by check_mar_mms.py."""
    from mxnet.gluon.model_zoo import vision
    mx.random.seed(3)
    net = vision.resnet18_v1(pretrained=False)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.nd.zeros((1, 3, 224, 224)))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "resnet"
        d.mkdir()
        net.export(str(d / "resnet"), 0)
        sig = {"inputs": [{"data_name": "data", "data_shape": [0, 3, 224, 224]}],
               "input_type": "image/jpeg",
               "outputs": [{"data_name": "softmax", "data_shape": [0, 1000]}],
               "output_type": "application/json"}
        # the handler ranks the network's scores: end the graph in a softmax as MMS models do
        sym = mx.sym.load(str(d / "resnet-symbol.json"))
        mx.sym.softmax(sym, name="softmax").save(str(d / "resnet-symbol.json"))
        (d / "signature.json").write_text(json.dumps(sig))
        (d / "mxnet_vision_service.py").write_text(VISION_HANDLER)
        (d / "synset.txt").write_text("".join(f"n{i:08d} label {i}\n" for i in range(1000)))
        subprocess.run([str(ARCHIVER), "--model-name", "resnet", "--model-path", str(d),
                        "--handler", "mxnet_vision_service:handle", "--export-path", str(out),
                        "-f"], check=True)
    yy, xx = np.mgrid[0:260, 0:300]
    rng = np.random.default_rng(5)
    img = np.stack([xx * 255 / 300, yy * 255 / 260, (xx + yy) % 97 * 2.6], -1)
    img = np.clip(img + rng.normal(0, 12, img.shape), 0, 255).astype(np.uint8)
    Image.fromarray(img).save(out / "photo.png")
    Image.fromarray(img).save(out / "photo.jpg", quality=90)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--resnet"]:
        resnet(Path(sys.argv[2]))
    else:
        main()
