"""The GluonCV fixture recipe, shared by the generator (MXNet 1.9.1 venv) and the tests.

Weights are not committed: both sides regenerate every parameter from its name with NumPy's
PCG64 (`default_rng`, stable across NumPy 1.23 and 2.x), so a fixture is only the symbol JSON, a
manifest of parameter names/shapes, and the recorded input/outputs. Pure Python + NumPy.
"""
from __future__ import annotations

import re
import zlib

import numpy as np

# GluonCV model name → input shape, `heads` (weight-std multipliers by name regex), optional
# `kwargs` for get_model, `set` (attributes set after building: smaller proposal counts) and
# `interop` (too slow for the default suite).
# The multipliers spread detector scores: random heads otherwise saturate to ties.
# FPN R-CNNs: the shared RPN head's box deltas and the class/box predictors (not the two
# box-head layers). `zero_unwritten_rois`: see gen_gluoncv.py (MXNet's CPU ROIAlign and
# the -1 rois of the other pyramid levels).
FPN_HEADS = {r"rcnn0_dense[01]_weight": 0.001, r"rpnhead0_conv2_weight": 0.01,
             r"^P\d_conv": 0.5}   # damp the pyramid: its random sums grow to ~500
MODELS: dict[str, dict] = {
    # nms_topk below post_nms (100): MXNet pads the rows past the kept ones with -1
    "ssd_300_mobilenet0.25_voc": dict(shape=(1, 3, 128, 128), heads={}, set={"nms_topk": 80}),
    "ssd_512_resnet18_v1_voc": dict(shape=(1, 3, 128, 128),
                                    heads={r"convpredictor.*_weight": 0.01}),
    "yolo3_mobilenet0.25_voc": dict(shape=(1, 3, 128, 128), heads={r"yolooutputv3": 0.05},
                                    set={"nms_topk": 60}),
    "faster_rcnn_resnet50_v1b_voc": dict(
        shape=(1, 3, 128, 128), heads={r"dense[01]_weight|rpn0_conv[12]_weight": 0.001},
        set={"_rpn_test_post_nms": 8, "rpn._test_pre_nms": 400, "rpn._test_post_nms": 8,
             "nms_topk": 50, "post_nms": 20},
        interop=True),
    "ssd_300_vgg16_atrous_voc": dict(shape=(1, 3, 300, 300), interop=True,
                                     heads={r"convpredictor.*_weight": 0.01}),
    "yolo3_darknet53_voc": dict(shape=(1, 3, 96, 96), interop=True,   # 52 layers: damp them
                                heads={r"darknet.*conv.*_weight": 0.6,
                                       r"yolooutputv3.*_weight": 0.1}),
    "mask_rcnn_resnet18_v1b_coco": dict(
        shape=(1, 3, 128, 128), heads={r"dense[01]_weight|rpn0_conv[12]_weight": 0.001},
        set={"_rpn_test_post_nms": 8, "rpn._test_pre_nms": 400, "rpn._test_post_nms": 8,
             "nms_topk": 50, "post_nms": 20, "_rcnn_max_dets": 20}, interop=True),
    "faster_rcnn_fpn_resnet50_v1b_coco": dict(
        shape=(1, 3, 128, 128), heads=FPN_HEADS,
        set={"_rpn_test_post_nms": 8, "rpn._test_pre_nms": 400, "rpn._test_post_nms": 8,
             "nms_topk": 50, "post_nms": 20},
        zero_unwritten_rois=True, interop=True),
    "mask_rcnn_fpn_resnet18_v1b_coco": dict(
        shape=(1, 3, 128, 128), heads=FPN_HEADS,
        set={"_rpn_test_post_nms": 8, "rpn._test_pre_nms": 400, "rpn._test_post_nms": 8,
             "nms_topk": 50, "post_nms": 20, "_rcnn_max_dets": 20}, zero_unwritten_rois=True),
    "center_net_mobilenetv3_small_duc_voc": dict(shape=(1, 3, 128, 128),
                                                 heads={r"centernet0_conv[01]_weight": 0.2}),
    "mobile_pose_mobilenetv3_small": dict(shape=(1, 3, 128, 96), heads={}),
    "center_net_resnet18_v1b_voc": dict(shape=(1, 3, 128, 128), heads={r"centernet0_conv[01]_weight": 0.1}),
    "center_net_resnet18_v1b_dcnv2_voc": dict(shape=(1, 3, 128, 128),
                                              heads={r"centernet0_conv[01]_weight": 0.1}),
    # DLA's random offsets reach ~90 pixels: damped, or float32 rounding decides the samples
    "center_net_dla34_dcnv2_voc": dict(shape=(1, 3, 128, 128), interop=True,
                                       heads={r"centernet0_conv[01]_weight": 0.1,
                                              r"deformable_conv0_offset_weight": 0.05,
                                              r"^(level|dlaup|idaup).*conv.*_weight": 0.6}),
    "center_net_mobilenetv3_large_duc_voc": dict(shape=(1, 3, 128, 128),
                                                 heads={r"centernet0_conv[01]_weight": 0.02}),
    "fcn_resnet50_voc": dict(shape=(1, 3, 64, 64), heads={}, interop=True,
                             kwargs=dict(crop_size=64, base_size=64, aux=False)),
    "psp_resnet50_ade": dict(shape=(1, 3, 32, 32), heads={}, interop=True,
                             kwargs=dict(crop_size=32, base_size=32, aux=False)),
    "deeplab_resnet50_ade": dict(shape=(1, 3, 32, 32), heads={}, interop=True,
                                 kwargs=dict(crop_size=32, base_size=32, aux=False)),
    "simple_pose_resnet18_v1b": dict(shape=(1, 3, 128, 96), heads={}),
    "resnet18_v1b": dict(shape=(1, 3, 64, 64), heads={}),
    "resnet50_v1c": dict(shape=(1, 3, 64, 64), heads={}, interop=True),
    "resnet50_v1d": dict(shape=(1, 3, 64, 64), heads={}, interop=True),
    "resnext50_32x4d": dict(shape=(1, 3, 64, 64), heads={}, interop=True),
    "se_resnet18_v1": dict(shape=(1, 3, 64, 64), heads={}),
    "resnest14": dict(shape=(1, 3, 64, 64), heads={}),
    "mobilenetv3_small": dict(shape=(1, 3, 64, 64), heads={}),
    "shufflenet_v2": dict(shape=(1, 3, 64, 64), heads={}),
    "hrnet_w18_small_v1_c": dict(shape=(1, 3, 64, 64), heads={}, interop=True),
    "cifar_resnet20_v1": dict(shape=(1, 3, 32, 32), heads={}),
}

INPUT_SEED = 20261201


def make_input(shape) -> np.ndarray:
    return np.random.default_rng(INPUT_SEED).uniform(-1.0, 1.0, size=shape).astype(np.float32)


LEARNED = ("weight", "bias", "gamma", "beta", "running_mean", "running_var", "moving_mean",
           "moving_var")


def is_learned(name: str) -> bool:
    """Parameters the recipe draws; any other (anchors, offsets…) is a model constant, kept as the
    model built it and stored with the fixture."""
    return name.endswith(LEARNED)


def make_param(name: str, shape, heads: dict | None = None) -> np.ndarray:
    """A deterministic value for one parameter, chosen from its name: BatchNorm statistics and
    affine terms near identity, biases small, weights He-normal over fan-in (times any head
    multiplier whose regex matches the name)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    shape = tuple(int(s) for s in shape)
    if name.endswith(("running_var", "moving_var")):
        v = rng.uniform(0.5, 1.5, shape)
    elif name.endswith("gamma"):
        v = rng.uniform(0.5, 1.5, shape)
    elif name.endswith(("beta", "bias", "running_mean", "moving_mean")):
        v = rng.normal(0.0, 0.1, shape)
    else:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        v = rng.normal(0.0, np.sqrt(2.0 / max(fan_in, 1)), shape)
        for pat, mult in (heads or {}).items():
            if re.search(pat, name):
                v = v * mult
    return v.astype(np.float32)


# -- the hybridserve side ----------------------------------------------------------------------
FIXTURE_DIR = __import__("pathlib").Path(__file__).parent / "fixtures" / "gluoncv"


def fixture_models() -> list[str]:
    return sorted(p.name[: -len("-symbol.json")] for p in FIXTURE_DIR.glob("*-symbol.json"))


def load_io(name: str):
    """The recorded outputs and model constants of a fixture (an LZMA-packed npz)."""
    import io
    import lzma

    return np.load(io.BytesIO(lzma.decompress((FIXTURE_DIR / f"{name}-io.npz.xz").read_bytes())))


def write_params(name: str, path) -> None:
    """The fixture's parameters (recipe values plus stored constants) as an MXNet 1.x file."""
    import json

    from framework.io.params_file import save_params

    manifest = json.loads((FIXTURE_DIR / f"{name}-manifest.json").read_text())
    io = load_io(name)
    heads = MODELS[name]["heads"]
    arrays = {}
    for pname, kind, shape in manifest["params"]:
        if is_learned(pname):
            arrays[f"{kind}:{pname}"] = make_param(pname, shape, heads)
        else:
            arrays[f"{kind}:{pname}"] = io[f"const:{pname}"]
    save_params(path, arrays, format="legacy")


def run_fixture(name: str, tmp_path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(hybridserve's outputs, real MXNet's outputs) of one GluonCV fixture, loaded through
    `SymbolBlock.imports` like any user export."""
    from framework.gluon import SymbolBlock

    params = tmp_path / f"{name}-0000.params"
    write_params(name, params)
    io = load_io(name)
    blk = SymbolBlock.imports(str(FIXTURE_DIR / f"{name}-symbol.json"), ["data"], str(params))
    outs = blk(__import__("framework").np.array(make_input(MODELS[name]["shape"])))
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    refs = [io[k] for k in sorted((k for k in io.files if k.startswith("out")),
                                  key=lambda k: int(k[3:]))]
    return [o.asnumpy() for o in outs], refs
