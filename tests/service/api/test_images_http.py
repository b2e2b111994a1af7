"""Images in, labels out over HTTP (the demo `colors` model: preprocess + label_filename), raw
bodies (an image by Content-Type; a raw tensor by Inference-Header-Content-Length: 0) and the
compute_input/compute_output statistics."""
from __future__ import annotations

import io
import json
import struct

import numpy as np
from PIL import Image

from service.cli.demo import COLORS

LABELS = list(COLORS)


def image(rgb, fmt: str = "JPEG", size=(90, 70)) -> bytes:
    b = io.BytesIO()
    Image.new("RGB", size, tuple(rgb)).save(b, fmt)
    return b.getvalue()


def bytes_request(blobs: list[bytes], classification: int = 5) -> tuple[bytes, dict]:
    """Encoded images as a binary BYTES tensor (4-byte length, then the bytes, per image)."""
    tail = b"".join(struct.pack("<I", len(b)) + b for b in blobs)
    head = json.dumps({"inputs": [{"name": "data", "datatype": "BYTES", "shape": [len(blobs)],
                                   "parameters": {"binary_data_size": len(tail)}}],
                       "outputs": [{"name": "probabilities",
                                    "parameters": {"classification": classification}}]}).encode()
    return head + tail, {"Inference-Header-Content-Length": str(len(head))}


def top(doc: dict) -> list:
    (out,) = doc["outputs"]
    return [s.split(":") for s in out["data"]], out["shape"]


def test_a_batch_of_images_in_top5_labels_out(http):
    body, headers = bytes_request([image(COLORS["red"]), image(COLORS["blue"], "PNG")])
    r = http.post("/v2/models/colors/infer", content=body, headers=headers)
    assert r.status_code == 200, r.text
    rows, shape = top(r.json())
    assert shape == [2, 5]
    first, second = rows[:5], rows[5:]
    # Triton's classification strings with labels: score:index:label
    assert first[0][1:] == [str(LABELS.index("red")), "red"]
    assert second[0][1:] == [str(LABELS.index("blue")), "blue"]
    assert all(LABELS[int(i)] == lab for _, i, lab in rows)
    scores = [float(s) for s, _, _ in first]
    assert scores == sorted(scores, reverse=True) and 0.5 < scores[0] <= 1.0


def test_raw_image_body_by_content_type(http):
    r = http.post("/v2/models/colors/infer?classification=3", content=image(COLORS["yellow"], "WEBP"),
                  headers={"Content-Type": "image/webp"})
    assert r.status_code == 200, r.text
    rows, shape = top(r.json())
    assert shape == [1, 3] and rows[0][2] == "yellow"


def test_raw_image_on_a_model_without_image_input(http):
    r = http.post("/v2/models/mlp/infer", content=image(COLORS["red"]),
                  headers={"Content-Type": "image/jpeg"})
    assert r.status_code == 400 and "declares no image input" in r.json()["error"]


def test_bad_images_are_400(http):
    body, headers = bytes_request([image(COLORS["red"]), b"not an image at all"])
    r = http.post("/v2/models/colors/infer", content=body, headers=headers)
    assert r.status_code == 400
    assert "input 'data' image 1: not an image in a supported format" in r.json()["error"]
    r = http.post("/v2/models/colors/infer", content=image(COLORS["red"])[:200],
                  headers={"Content-Type": "image/jpeg"})
    assert r.status_code == 400 and "image 0" in r.json()["error"]


def test_preprocessed_tensor_still_accepted(http):
    x = np.zeros((1, 3, 64, 64), np.float32)         # mid-grey after mean/std
    r = http.post("/v2/models/colors/infer", json={
        "inputs": [{"name": "data", "datatype": "FP32", "shape": [1, 3, 64, 64],
                    "data": x.ravel().tolist()}],
        "outputs": [{"name": "probabilities", "parameters": {"classification": 1}}]})
    assert r.status_code == 200, r.text
    assert top(r.json())[0][0][2] == "grey"


def test_config_shows_preprocess_and_labels(http):
    doc = http.get("/v2/models/colors/config").json()
    assert doc["input"][0]["preprocess"]["layout"] == "NCHW"
    assert doc["output"][0]["label_filename"] == "labels.txt"


def test_raw_binary_tensor_with_zero_header_length(http, mlp_ref):
    x = np.random.default_rng(3).standard_normal((1, 512)).astype(np.float32)
    r = http.post("/v2/models/mlp/infer", content=x.tobytes(),
                  headers={"Inference-Header-Content-Length": "0"})
    assert r.status_code == 200, r.text
    n = int(r.headers["inference-header-content-length"])     # outputs binary, as Triton
    (out,) = json.loads(r.content[:n])["outputs"]
    assert out["shape"] == [1, 2]
    np.testing.assert_allclose(np.frombuffer(r.content[n:], np.float32).reshape(1, 2),
                               mlp_ref(x), rtol=1e-5, atol=1e-6)
    r = http.post("/v2/models/mlp/infer", content=x.tobytes()[:-4],
                  headers={"Inference-Header-Content-Length": "0"})
    assert r.status_code == 400 and "expecting 2048 bytes" in r.json()["error"]


def test_raw_binary_image_with_zero_header_length(http):
    r = http.post("/v2/models/colors/infer?classification=1", content=image(COLORS["green"]),
                  headers={"Inference-Header-Content-Length": "0"})
    assert r.status_code == 200, r.text
    n = int(r.headers["inference-header-content-length"])
    blob = r.content[n:]
    assert blob[4:].decode().endswith(":green")


def test_compute_input_and_output_are_counted(http):
    def stats():
        return http.get("/v2/models/colors/stats").json()["model_stats"][0]
    before = stats()["inference_stats"]
    body, headers = bytes_request([image(COLORS["pink"], size=(640, 480))] * 4)
    assert http.post("/v2/models/colors/infer", content=body, headers=headers).status_code == 200
    after = stats()
    s = after["inference_stats"]
    for key in ("compute_input", "compute_output"):
        assert s[key]["count"] == before[key]["count"] + 1
        assert s[key]["ns"] > before[key]["ns"]
    # decoding four 640x480 JPEGs costs far more than validating a tensor
    assert s["compute_input"]["ns"] - before["compute_input"]["ns"] > 1_000_000
    b4 = next(b for b in after["batch_stats"] if b["batch_size"] == 4)
    assert b4["compute_input"]["count"] >= 1 and b4["compute_output"]["count"] >= 1
