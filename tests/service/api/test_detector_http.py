"""GluonCV detectors served as a user would: the real GluonCV 0.10.5 exports of
tests/fixtures/gluoncv (weights from tests/gluoncv_recipe.py) uploaded through the repository
endpoint (multipart symbol + params + config), then inferred over JSON and binary tensors,
summarised (endpoint and CLI) and inspected through the NMS. Every detection output must be
real MXNet's: class ids equal, -1 padding rows where MXNet pads, scores and boxes within the
deep-net bound."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from gluoncv_recipe import FIXTURE_DIR, MODELS, load_io, make_input, write_params
from serverproc import infer_json

SSD, YOLO = "ssd_300_mobilenet0.25_voc", "yolo3_mobilenet0.25_voc"
FRCNN = "faster_rcnn_resnet50_v1b_voc"


def _refs(name: str) -> list[np.ndarray]:
    io = load_io(name)
    keys = sorted((k for k in io.files if k.startswith("out")), key=lambda k: int(k[3:]))
    return [io[k] for k in keys]


def _config(name: str) -> dict:
    return {"inputs": [{"name": "data", "datatype": "FP32",
                        "shape": [-1, *MODELS[name]["shape"][1:]]}], "max_batch_size": 2}


def _files(name: str, tmp_path, symbol: bytes | None = None) -> dict:
    params = tmp_path / f"{name}-0000.params"
    write_params(name, params)
    sym = symbol if symbol is not None else (FIXTURE_DIR / f"{name}-symbol.json").read_bytes()
    return {"symbol": (f"{name}-symbol.json", sym),
            "params": (params.name, params.read_bytes()),
            "config": ("config.json", json.dumps(_config(name)))}


def _upload(http, name: str, tmp_path) -> str:
    served = "det_" + re.sub(r"\W", "_", name)
    if http.get(f"/v2/models/{served}").status_code != 200:
        r = http.post(f"/v2/repository/models/{served}/upload", files=_files(name, tmp_path))
        assert r.status_code == 201, r.text
    return served


def _bound(ref: np.ndarray) -> float:
    return 1e-4 * max(1.0, float(np.abs(ref).max()))


def assert_detections(outs: list[np.ndarray], refs: list[np.ndarray]) -> None:
    """ids, scores, boxes as MXNet gave them: the same kept rows in the same order."""
    ids, scores, boxes = outs
    rids, rscores, rboxes = refs
    kept = rscores.reshape(-1) >= 0
    assert 5 <= kept.sum() < kept.size, "the fixture should keep some rows and pad the rest"
    assert np.all(rids.reshape(-1)[~kept] == -1) and np.all(rboxes.reshape(-1, 4)[~kept] == -1)
    np.testing.assert_array_equal(ids, rids)
    for o, r in zip(outs, refs):
        assert o.shape == r.shape and o.dtype == r.dtype
        assert np.abs(o.astype(np.float64) - r).max() <= _bound(r)


def _json_outputs(doc: dict) -> list[np.ndarray]:
    return [np.array(o["data"], np.float32).reshape(o["shape"]) for o in doc["outputs"]]


@pytest.mark.parametrize("name", [SSD, YOLO])
def test_detector_json_equals_mxnet(http, tmp_path, name):
    served = _upload(http, name, tmp_path)
    md = http.get(f"/v2/models/{served}").json()
    assert [o["datatype"] for o in md["outputs"]] == ["FP32"] * 3
    # the backbone runs compiled, the NMS on its NumPy kernel
    p = md["parameters"]
    assert p["engine"] == "onnxruntime", p
    assert 0 < p["onnxruntime_nodes"] < p["graph_nodes"]
    x = make_input(MODELS[name]["shape"])
    r = http.post(f"/v2/models/{served}/infer", json=infer_json(served, x))
    assert r.status_code == 200, r.text
    outs = _json_outputs(r.json())
    assert [o["shape"] for o in r.json()["outputs"]] == [list(a.shape) for a in _refs(name)]
    assert_detections(outs, _refs(name))


def test_detector_binary_batch_of_two(http, tmp_path):
    """Binary tensors both ways; a batch of two gives each image MXNet's detections."""
    served = _upload(http, SSD, tmp_path)
    x = np.concatenate([make_input(MODELS[SSD]["shape"])] * 2)
    head = json.dumps({"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                                   "parameters": {"binary_data_size": x.nbytes}}],
                       "parameters": {"binary_data_output": True}}).encode()
    r = http.post(f"/v2/models/{served}/infer", content=head + x.tobytes(),
                  headers={"Inference-Header-Content-Length": str(len(head))})
    assert r.status_code == 200, r.text
    n = int(r.headers["inference-header-content-length"])
    outs, at = [], n
    for o in json.loads(r.content[:n])["outputs"]:
        size = o["parameters"]["binary_data_size"]
        outs.append(np.frombuffer(r.content[at:at + size], np.float32).reshape(o["shape"]))
        at += size
    assert at == len(r.content)
    for b in range(2):
        assert_detections([o[b:b + 1] for o in outs], _refs(SSD))


def test_detector_summary_endpoint(http, tmp_path):
    served = _upload(http, SSD, tmp_path)
    s = http.get(f"/v2/models/{served}/summary").json()
    rows = {r["name"]: r for r in s["layers"]}
    nms, dec = rows["ssd0_box_nms0"], rows["ssd0_normalizedboxcenterdecoder0_box_decode0"]
    assert nms["op"] == "_contrib_box_nms" and dec["op"] == "_contrib_box_decode"
    boxes = nms["output_shape"][1]
    assert nms["output_shape"] == [1, boxes, 6] and dec["output_shape"] == [1, boxes // 20, 4]
    # worst case of NMS: every pair of its topk candidates compared (~10 FLOPs an IoU)
    graph = json.loads((FIXTURE_DIR / f"{SSD}-symbol.json").read_text())
    topk = int(next(n for n in graph["nodes"] if n["name"] == "ssd0_box_nms0")["attrs"]["topk"])
    assert nms["flops"] >= topk * (topk - 1) // 2 * 10 and dec["flops"] >= 20 * boxes // 20
    conv = sum(r["flops"] for r in s["layers"] if r["op"] == "Convolution")
    assert s["flops_complete"] and s["flops"] > conv > nms["flops"]
    assert s["total_params"] > 0 and s["inputs"][0]["shape"] == [1, 3, 128, 128]
    text = http.get(f"/v2/models/{served}/summary", params={"format": "text"}).text
    assert re.search(r"ssd0_box_nms0\(_contrib_box_nms\)\s+\(1, %d, 6\)\s+0" % boxes, text)


def test_detector_summary_cli(tmp_path, capsys):
    from service.cli.main import main
    files = _files(SSD, tmp_path)
    for key, (fname, data) in files.items():
        (tmp_path / fname).write_bytes(data if isinstance(data, bytes) else data.encode())
    args = ["summary", "--symbol", str(tmp_path / f"{SSD}-symbol.json"), "--params",
            str(tmp_path / f"{SSD}-0000.params"), "--config", str(tmp_path / "config.json"), "-q"]
    assert main(args + ["--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    nms = next(r for r in s["layers"] if r["op"] == "_contrib_box_nms")
    assert nms["flops"] > 0 and s["flops_complete"]
    assert main(args + ["--batch-size", "2"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"ssd0_box_nms0\(_contrib_box_nms\)\s+\(2, \d+, 6\)", text)
    assert "Estimated FLOPs (batch 2)" in text and "lower bound" not in text


def test_detector_inspect_through_nms(http, tmp_path):
    """Op hooks see the NMS and the nodes after it; those carry MXNet's final detections."""
    served = _upload(http, SSD, tmp_path)
    x = make_input(MODELS[SSD]["shape"])
    body = infer_json(served, x, parameters={"filter": r"box_nms|slice_axis4[0-3]_",
                                             "regex": True, "include_values": True,
                                             "max_values": 600})
    r = http.post(f"/v2/models/{served}/inspect", json=body)
    assert r.status_code == 200, r.text
    recs = {rec["name"]: rec for rec in r.json()["records"]}
    nms = next(v for k, v in recs.items() if "box_nms" in k)
    assert nms["op"] == "_contrib_box_nms" and nms["shape"][-1] == 6
    ids, scores, boxes = _refs(SSD)
    after = [v for v in recs.values() if v["op"] == "slice_axis"]
    by_shape = {tuple(v["shape"]): v for v in after}
    assert set(by_shape) >= {(1, 100, 1), (1, 100, 4), (1, 100, 6)}
    box_rec = by_shape[(1, 100, 4)]
    np.testing.assert_allclose(box_rec["values"], boxes.ravel()[:600], rtol=0,
                               atol=_bound(boxes))
    id_recs = [v for v in after if v["shape"] == [1, 100, 1]
               and np.array_equal(v["values"], ids.ravel())]
    assert id_recs, "the ids slice after the NMS should hold MXNet's class ids"
    # the NMS rows start with MXNet's kept detections: [id, score, box]
    kept = int((scores >= 0).sum())
    rows = np.array(nms["values"][: kept * 6]).reshape(kept, 6)
    np.testing.assert_array_equal(rows[:, 0], ids.ravel()[:kept])


def test_missing_operator_fails_at_upload_naming_node_and_op(http, tmp_path):
    """An export with an operator hybridserve lacks is refused when loaded, naming node and op,
    and never becomes a served model that fails per request."""
    graph = json.loads((FIXTURE_DIR / f"{SSD}-symbol.json").read_text())
    node = next(n for n in graph["nodes"] if n["op"] == "_contrib_box_nms")
    node["op"] = "_contrib_hawkesll"          # a real MXNet op that hybridserve does not have
    r = http.post("/v2/repository/models/det_missing_op/upload",
                  files=_files(SSD, tmp_path, json.dumps(graph).encode()))
    assert r.status_code == 400, r.text
    msg = r.json()["error"]
    assert "_contrib_hawkesll" in msg and node["name"] in msg, msg
    assert http.get("/v2/models/det_missing_op").status_code == 404


@pytest.mark.interop
@pytest.mark.slow
def test_faster_rcnn_served_equals_mxnet(http, tmp_path):
    served = _upload(http, FRCNN, tmp_path)
    x = make_input(MODELS[FRCNN]["shape"])
    r = http.post(f"/v2/models/{served}/infer", json=infer_json(served, x))
    assert r.status_code == 200, r.text
    assert_detections(_json_outputs(r.json()), _refs(FRCNN))
