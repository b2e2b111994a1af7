"""Survey GluonCV 0.10.5's model zoo against hybridserve: which families export operators
hybridserve lacks, and which load and give MXNet 1.9.1's outputs.

Two stages, one command (`PYTHONPATH=. python tests/interop/survey_gluoncv.py [--all] [names]`):

1. In the GluonCV venv (`--mx OUTDIR`): every name of `model_zoo.get_model_list()` is traced
   symbolically (no weights: the operator list of its export); the representatives (one network
   per architecture, `REPRESENTATIVES`, or every name with `--all`) are also built with
   `pretrained=False`, given the fixture recipe's seeded weights, run on a small input and
   exported with their outputs.
2. Here: each operator list is checked against the registry, each export is loaded through
   `SymbolBlock.imports`, run and compared (max|Δ| ≤ 1e-4·max(1, max|ref|) per output).
   A markdown table goes to artifacts/interop/gluoncv-survey.md.

Random detector heads saturate and compare near-ties, so a detector's mismatch here means "look
at it" (the fixtures in tests/fixtures/gluoncv scale their heads; see gluoncv_recipe.py).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))          # tests/: the shared recipe

# one network per architecture (the smallest variant), by task
REPRESENTATIVES = {
    "classification": [
        "resnet18_v1", "resnet18_v2", "se_resnet18_v2", "vgg11_bn", "alexnet", "densenet121",
        "shufflenet_v1", "squeezenet1.1", "googlenet", "inceptionv3", "xception", "mobilenet0.25",
        "mobilenetv2_0.25", "mobilenetv3_large", "resnet50_v1e", "resnet50_v1s", "resnet50_v1b_gn",
        "se_resnext50_32x4d", "darknet53", "nasnet_4_1056", "residualattentionnet56",
        "cifar_residualattentionnet56", "cifar_wideresnet16_10", "cifar_resnext29_32x4d",
        "cifar_resnet20_v2", "resnet18_v1b_0.89", "dla34", "hrnet_w18_small_v2_s"],
    "detection": [
        "ssd_512_mobilenet1.0_voc", "ssd_300_resnet34_v1b_voc", "ssd_300_mobilenet1.0_lite_coco",
        "yolo3_mobilenet1.0_voc", "doublehead_rcnn_resnet50_v1b_voc",
        "faster_rcnn_fpn_syncbn_resnet50_v1b_coco", "mask_rcnn_fpn_syncbn_mobilenet1_0_coco",
        "center_net_dla34_dcnv2_voc", "center_net_mobilenetv3_large_duc_voc"],
    "segmentation": ["icnet_resnet50_citys", "fastscnn_citys", "danet_resnet50_citys",
                     "deeplab_v3b_plus_wideresnet_citys", "deeplab_resnest50_ade"],
    "pose": ["alpha_pose_resnet101_v1b_coco", "simple_pose_resnet50_v1d",
             "mobile_pose_resnet18_v1b"],
    "action recognition": ["c3d_kinetics400", "p3d_resnet50_kinetics400",
                           "r2plus1d_resnet18_kinetics400", "i3d_resnet50_v1_kinetics400",
                           "i3d_nl5_resnet50_v1_kinetics400", "slowfast_4x16_resnet50_kinetics400",
                           "i3d_inceptionv1_kinetics400"],
    "depth": ["monodepth2_resnet18_kitti_stereo_640x192"],
}
# head multipliers (see gluoncv_recipe.py) where random heads would compare near-ties
FAMILY_HEADS = {"center_net": {r"centernet0_conv[01]_weight": 0.1},
                "rcnn": {r"rcnn0_dense[01]_weight": 0.001, r"rpn0_conv[12]_weight": 0.001,
                         r"rpnhead0_conv2_weight": 0.01}}
RCNN_SET = {"_rpn_test_post_nms": 8, "rpn._test_pre_nms": 400, "rpn._test_post_nms": 8,
            "nms_topk": 50, "post_nms": 20}


def input_shape(name: str) -> tuple:
    rules = [(r"^c3d|^p3d|^r2plus1d", (1, 3, 16, 112, 112)), (r"^slowfast", (1, 3, 36, 64, 64)),
             (r"^i3d", (1, 3, 8, 64, 64)), (r"inception|googlenet|^nasnet", (1, 3, 299, 299)),
             (r"^cifar", (1, 3, 32, 32)), (r"pose", (1, 3, 128, 96)),
             (r"^densenet|^squeezenet|^residualattention", (1, 3, 224, 224)),
             (r"^ssd_300", (1, 3, 300, 300)), (r"mobilenet1_0_coco", (1, 3, 256, 256)),
             (r"^monodepth2", (1, 3, 192, 640)), (r"rcnn|^ssd|^yolo|center_net", (1, 3, 128, 128)),
             (r"citys|_ade$|_voc$|_coco$", (1, 3, 64, 64))]
    for pat, shape in rules:
        if re.search(pat, name):
            return shape
    return (1, 3, 64, 64)


# -- stage 1: the GluonCV venv -----------------------------------------------------------------
def _build(name: str):
    import mxnet as mx
    from gluoncv import model_zoo
    seg = dict(crop_size=64, base_size=64, aux=False) if re.search(r"citys|_ade$", name) else {}
    tries = [dict(pretrained_base=False, **seg), dict(pretrained_base=False, classes=["a", "b"]),
             {}, dict(classes=["a", "b"])]
    err = None
    for kw in tries:
        try:
            return model_zoo.get_model(name, pretrained=False, **kw)
        except (TypeError, ValueError, Warning) as e:  # an argument it does not take
            err = e
    raise err if err else mx.base.MXNetError(f"cannot build {name}")


def _trace_ops(name: str) -> list[str]:
    import mxnet as mx
    sym = _build(name)(mx.sym.var("data"))
    sym = mx.sym.Group(list(sym)) if isinstance(sym, (list, tuple)) else sym
    return sorted({n["op"] for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"})


def _export(name: str, out: str) -> dict:
    import mxnet as mx
    import numpy as np
    from gen_gluoncv import _run_zeroing_unwritten_rois
    from gluoncv_recipe import MODELS, is_learned, make_input, make_param
    heads = MODELS[name]["heads"] if name in MODELS else \
        next((h for k, h in FAMILY_HEADS.items() if k in name), {})
    # fresh name counters: parameter names (centernet0_…) the head regexes expect
    mx.name.NameManager._current.value = mx.name.NameManager()
    net = _build(name)
    if "rcnn" in name:
        for path, value in RCNN_SET.items():
            *owners, attr = path.split(".")
            obj = net
            for o in owners:
                obj = getattr(obj, o, None)
            if obj is not None:
                setattr(obj, attr, value)
    net.initialize()
    net.hybridize()
    x = mx.nd.array(make_input(input_shape(name)))
    net(x)
    for p in net.collect_params().values():
        if is_learned(p.name):
            p.set_data(mx.nd.array(make_param(p.name, p.shape, heads)))
    # FPN R-CNNs read unwritten memory in MXNet's CPU ROIAlign (gen_gluoncv.py)
    outs = _run_zeroing_unwritten_rois(net, x) if "rcnn" in name else net(x)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    os.makedirs(out, exist_ok=True)
    net.export(os.path.join(out, "m"))
    np.savez(os.path.join(out, "io.npz"), data=x.asnumpy(),
             **{f"out{i}": o.asnumpy() for i, o in enumerate(outs)})
    return {"shape": list(x.shape)}


def mx_stage(outdir: str, names: list[str]) -> None:
    import signal
    import warnings
    warnings.simplefilter("ignore")
    from gluoncv import model_zoo

    def alarm(*_):
        raise TimeoutError("over 300 s")
    signal.signal(signal.SIGALRM, alarm)
    path = os.path.join(outdir, "mx.json")
    report = json.load(open(path)) if os.path.exists(path) else {}   # traces are kept
    for name in model_zoo.get_model_list():
        rec = report.setdefault(name, {})
        for stage, fn in (("ops", lambda: _trace_ops(name)),
                          ("export", lambda: _export(name, os.path.join(outdir, name)))):
            if stage == "ops" and "ops" in rec or \
                    stage == "export" and name not in names and "--all" not in names:
                continue
            rec.pop(f"{stage}_error", None)
            signal.alarm(300)
            try:
                rec[stage] = fn()
            except BaseException as e:  # noqa: BLE001 -- a survey records every failure
                rec[f"{stage}_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
            signal.alarm(0)
        print(name, "ok" if "ops" in rec else rec.get("ops_error"), flush=True)
        with open(path, "w") as f:
            json.dump(report, f, indent=0)


# -- stage 2: hybridserve ----------------------------------------------------------------------
def _check(name: str, d: str) -> dict:
    import numpy as np

    import framework
    from framework.gluon import SymbolBlock
    io = np.load(os.path.join(d, "io.npz"))
    t0 = time.perf_counter()
    blk = SymbolBlock.imports(os.path.join(d, "m-symbol.json"), ["data"],
                              os.path.join(d, "m-0000.params"))
    outs = blk(framework.np.array(io["data"]))
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    worst = 0.0
    for i, o in enumerate(outs):
        ref = io[f"out{i}"]
        o = o.asnumpy()
        if o.shape != ref.shape:
            return {"status": f"shape {o.shape} vs {ref.shape}"}
        fin = np.abs(ref[np.isfinite(ref)])
        bound = 1e-4 * max(1.0, float(fin.max()) if fin.size else 1.0)
        worst = max(worst, float(np.abs(o.astype(np.float64) - ref).max() / bound) if o.size else 0)
    return {"status": "ok" if worst <= 1 else "mismatch", "delta_over_bound": worst,
            "seconds": round(time.perf_counter() - t0, 1)}


def main() -> None:
    if sys.argv[1:2] == ["--mx"]:
        mx_stage(sys.argv[2], sys.argv[3:])
        return
    from interop_util import venv_python
    from framework.ops.registry import has_op
    names = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not names:
        names = [n for group in REPRESENTATIVES.values() for n in group]
    outdir = os.path.join(REPO, "artifacts", "interop", "gluoncv-survey")
    os.makedirs(outdir, exist_ok=True)
    if "--reuse" not in sys.argv:
        # MXNet 1.9.1's oneDNN path fails `to.IsDefaultData()` setting 5-D conv weights
        env = {**os.environ, "MXNET_MKLDNN_ENABLED": "0"}
        subprocess.run([venv_python("1.9.1"), os.path.abspath(__file__), "--mx", outdir]
                       + (["--all"] if "--all" in sys.argv else names), check=True, env=env)
    with open(os.path.join(outdir, "mx.json")) as f:
        report = json.load(f)
    spath = os.path.join(outdir, "survey.json")
    rows = {r["model"]: r for r in json.load(open(spath))} if os.path.exists(spath) else {}
    for name, rec in report.items():
        missing = [o for o in rec.get("ops", []) if not has_op(o)]
        row = {"model": name, "missing": missing, "trace_error": rec.get("ops_error")}
        if name not in names and "--all" not in sys.argv:
            rows[name] = {**rows.get(name, {}), **row}   # keep an earlier run's check
            continue
        if "export" in rec and not missing:
            try:
                row.update(_check(name, os.path.join(outdir, name)))
            except Exception as e:  # noqa: BLE001 -- a survey records every failure
                row["status"] = f"error: {type(e).__name__}: {str(e)[:120]}"
        elif "export_error" in rec:
            row["status"] = f"MXNet export failed: {rec['export_error']}"
        rows[name] = row
        if "status" in row:
            print(name, row["status"], row.get("delta_over_bound", ""), flush=True)
    with open(spath, "w") as f:
        json.dump(list(rows.values()), f, indent=0)
    missing = sorted({o for r in rows.values() for o in r["missing"]})
    print("operators missing:", missing or "none")


if __name__ == "__main__":
    main()
